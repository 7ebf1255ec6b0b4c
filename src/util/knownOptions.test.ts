import { describe, expect, it } from "vitest";
import { checkKnownOptions, closestName } from "./knownOptions.ts";

const KNOWN = {
  retries: true,
  resources: true,
  priority: true,
  workers: true,
  pure: true,
} as const;

describe("checkKnownOptions", () => {
  it("lets known options through, own keys only", () => {
    expect(() => checkKnownOptions("submitWith", { retries: 1, pure: false }, KNOWN)).not.toThrow();
    const inherited = Object.create({ nonsense: 1 }) as object;
    expect(() => checkKnownOptions("submitWith", inherited, KNOWN)).not.toThrow();
  });

  it("names a misspelt option and the one meant", () => {
    expect(() => checkKnownOptions("submitWith", { retires: 3 }, KNOWN)).toThrow(
      new TypeError('submitWith: unknown option "retires" (did you mean retries?)'),
    );
    expect(() => checkKnownOptions("submitWith", { Priority: 3 }, KNOWN)).toThrow(
      /"Priority" \(did you mean priority\?\)$/,
    );
  });

  it("names the camelCase option a Python spelling means", () => {
    const known = { transferIncomingCountLimit: true, timeoutMs: true } as const;
    expect(() =>
      checkKnownOptions("WorkerState", { transfer_incoming_count_limit: 2 }, known),
    ).toThrow(/"transfer_incoming_count_limit" \(did you mean transferIncomingCountLimit\?\)$/);
    expect(closestName("timeout_ms", ["timeoutMs", "retries"])).toBe("timeoutMs");
  });

  it("lists the options when nothing is close, with the hint", () => {
    expect(() =>
      checkKnownOptions("LocalCluster.start", { nthreads: 4, wrokers: 2 }, KNOWN, "more elsewhere"),
    ).toThrow(
      new TypeError(
        'LocalCluster.start: unknown options "nthreads", "wrokers" (did you mean workers?) (the options are retries, resources, priority, workers, pure; more elsewhere)',
      ),
    );
  });
});

describe("checkKnownOptions without a hint", () => {
  it("ends the list of options there, and refuses an inherited name as an option", () => {
    expect(() => checkKnownOptions("f", { zzz: 1 }, KNOWN)).toThrow(
      new TypeError(
        'f: unknown option "zzz" (the options are retries, resources, priority, workers, pure)',
      ),
    );
    expect(() => checkKnownOptions("f", { toString: 1 }, KNOWN)).toThrow(
      /unknown option "toString"/,
    );
  });
});

describe("closestName", () => {
  it("takes slips of the keyboard, not other words", () => {
    expect(closestName("memoryLimt", ["memoryLimit", "memoryTarget"])).toBe("memoryLimit");
    expect(closestName("nthread", ["nthreads", "name"])).toBe("nthreads");
    expect(closestName("n", ["nthreads", "name"])).toBeNull();
    expect(closestName("timeout", ["timeoutMs", "name"])).toBe("timeoutMs");
    expect(closestName("mem", ["memoryLimit"])).toBeNull();
    expect(closestName("threads", ["workers", "validate"])).toBeNull();
  });

  it("counts a substitution or a case change as one slip, and allows one even in short names", () => {
    expect(closestName("retrias", ["retries"])).toBe("retries");
    expect(closestName("RETRIES", ["retries"])).toBe("retries");
    expect(closestName("pur", ["pure"])).toBe("pure");
  });

  it("allows a slip per 4 characters, at most 2", () => {
    expect(closestName("prioty", ["priority"])).toBeNull(); // 2 slips in 6 characters
    expect(closestName("memoryLimitXYZ", ["memoryLimit"])).toBeNull(); // 3 slips
  });

  it("takes the first of equally close names", () => {
    expect(closestName("worker", ["workers", "worked"])).toBe("workers");
  });
});
