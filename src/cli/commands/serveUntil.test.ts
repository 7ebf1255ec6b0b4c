import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resourcesText } from "../../util/resourceAmount.ts";
import { MAX_TIMER_MS } from "../../util/timers.ts";
import {
  byteSize,
  durationMs,
  frameLimitsFrom,
  MIN_MAX_MESSAGE_BYTES,
  nonNegativeInt,
  parseResources,
  positiveDurationMs,
  positiveInt,
  timeoutMs,
  untilSignal,
} from "./serveUntil.ts";

describe("parseResources (weft worker --resources)", () => {
  it("reads NAME=AMOUNT pairs", () => {
    expect(parseResources("GPU=1,MEM=8e9")).toEqual({ GPU: 1, MEM: 8e9 });
    expect(parseResources("GPU=0")).toEqual({ GPU: 0 });
    expect(parseResources("")).toEqual({});
    // Dask's --resources "GPU=2 MEM=10e9", apart by spaces: refused as 'bad resource'.
    expect(parseResources("GPU=2 MEM=10e9")).toEqual({ GPU: 2, MEM: 10e9 });
    expect(parseResources(" GPU = 1 ,\tMEM=2 ")).toEqual({ GPU: 1, MEM: 2 });
  });

  it("reads back what resourcesText writes (logs and weft status show resources so)", () => {
    const name = fc.stringMatching(/^[A-Za-z_][\w.:-]{0,11}$/);
    const amount = fc.oneof(
      fc.nat(),
      fc.double({ min: 0, max: 1e300, noNaN: true, noDefaultInfinity: true }),
    );
    fc.assert(
      fc.property(fc.dictionary(name, amount), (resources) => {
        expect(parseResources(resourcesText(resources))).toEqual(resources);
      }),
    );
    expect(resourcesText({ GPU: 1, MEM: 8e9 })).toBe("GPU=1,MEM=8000000000");
    expect(resourcesText({})).toBe("");
  });

  it("refuses a pair without an amount instead of reading it as 0", () => {
    for (const bad of ["GPU=", "GPU= ", "GPU", "=1", "GPU=x", "GPU=-1", "GPU=1,MEM="]) {
      expect(() => parseResources(bad), bad).toThrow(/expected NAME=AMOUNT/);
    }
  });

  it("refuses a name given twice, which kept its last amount without a word", () => {
    expect(() => parseResources("GPU=1,GPU=2")).toThrow('resource "GPU" is given twice');
    expect(() => parseResources("GPU=1, GPU =1")).toThrow('resource "GPU" is given twice');
  });

  it("declares a resource named like an Object member, as any other", () => {
    const got = parseResources("__proto__=2,toString=1");
    expect(Object.keys(got)).toEqual(["__proto__", "toString"]);
    expect(Object.getOwnPropertyDescriptor(got, "__proto__")?.value).toBe(2);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });
});

describe("byteSize (--max-frame-bytes, --max-message-bytes)", () => {
  it("reads sizes as Dask writes them", () => {
    expect(byteSize("--max-frame-bytes", "64MiB")).toBe(64 * 2 ** 20);
    expect(byteSize("--max-frame-bytes", "4GB")).toBe(4e9);
    expect(byteSize("--max-frame-bytes", "1e6")).toBe(1e6);
  });

  it("refuses an empty size instead of reading it as 1 byte", () => {
    for (const bad of ["", " ", "x", "0"]) {
      expect(() => byteSize("--max-message-bytes", bad), JSON.stringify(bad)).toThrow(
        /--max-message-bytes must be a size such as 64MiB or 4GB/,
      );
    }
  });

  it("refuses a fraction of a byte, which parse_bytes would truncate (1.5 to 1 byte)", () => {
    for (const bad of ["1.5", "1.1KiB", "100000.5B", "1.0001kB"]) {
      expect(() => byteSize("--max-frame-bytes", bad), bad).toThrow(
        `--max-frame-bytes must be a whole number of bytes, got ${JSON.stringify(bad)} (a size without a unit is in bytes)`,
      );
    }
    expect(byteSize("--max-frame-bytes", "1.5kB")).toBe(1500);
    expect(byteSize("--max-frame-bytes", "0.5KiB")).toBe(512);
  });
});

describe("frameLimitsFrom", () => {
  it("takes the sizes given, and nothing for those not given", () => {
    expect(frameLimitsFrom({})).toEqual({});
    expect(frameLimitsFrom({ maxFrameBytes: "1KiB", maxMessageBytes: "64KiB" })).toEqual({
      maxFrameBytes: 1024,
      maxMessageBytes: MIN_MAX_MESSAGE_BYTES,
    });
  });

  it("refuses a --max-message-bytes too small for the cluster's own messages", () => {
    expect(() => frameLimitsFrom({ maxMessageBytes: "300" })).toThrow(
      /^--max-message-bytes must be at least 64KiB \(a cluster's own messages, such as a worker's registration and heartbeats, need room\), got "300" \(300 bytes; a size without a unit is in bytes\)$/,
    );
    expect(() => frameLimitsFrom({ maxMessageBytes: "63KiB" })).toThrow(
      /got "63KiB" \(64512 bytes\)$/,
    );
  });
});

const MS_FORMS =
  "must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h";

describe("the integer and duration options", () => {
  it("positiveInt takes integers from 1, exactly", () => {
    expect(positiveInt("--n", "1")).toBe(1);
    for (const bad of ["0", "-1", "1.5", "x", ""]) {
      expect(() => positiveInt("--n", bad), bad).toThrow(
        `--n must be a positive integer, got ${bad}`,
      );
    }
    expect(() => positiveInt("--n", "99999999999999999999")).toThrow(
      `--n must be at most ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER), got 99999999999999999999`,
    );
    // Read as Infinity, it was told it must be an integer, where weft sim names the bound.
    expect(() => positiveInt("--n", "1e400")).toThrow(
      `--n must be at most ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER), got 1e400`,
    );
    expect(() => nonNegativeInt("--max-restarts", "1e400")).toThrow(
      `--max-restarts must be at most ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER), got 1e400`,
    );
  });

  it("nonNegativeInt takes 0, and refuses an empty value instead of reading it as 0", () => {
    expect(nonNegativeInt("--max-restarts", "0")).toBe(0);
    expect(nonNegativeInt("--max-restarts", "7")).toBe(7);
    expect(Object.is(nonNegativeInt("--max-restarts", "-0"), 0)).toBe(true);
    for (const bad of ["", " ", "-1", "0.5"]) {
      expect(() => nonNegativeInt("--max-restarts", bad), JSON.stringify(bad)).toThrow(
        `--max-restarts must be an integer ≥ 0, got ${bad}`,
      );
    }
  });

  it("read decimal only: not 0x10, 0b11 or 0o7, padding, or 1_000", () => {
    // Read with Number, 0x10 was 16 and " 5 " 5.
    for (const bad of ["0x10", "0b11", "0o7", " 5 ", "1_000"]) {
      expect(() => positiveInt("--n", bad), bad).toThrow(
        `--n must be a positive integer, got ${bad}`,
      );
      expect(() => nonNegativeInt("--max-restarts", bad), bad).toThrow(
        `--max-restarts must be an integer ≥ 0, got ${bad}`,
      );
      expect(() => timeoutMs("--timeout", bad), bad).toThrow(`--timeout ${MS_FORMS}, got ${bad}`);
      // Blanks around a list's items are the list's: "GPU = 1, MEM=2" is fine.
      if (bad.trim() === bad) {
        expect(() => parseResources(`GPU=${bad}`), bad).toThrow(/expected NAME=AMOUNT/);
      }
    }
    expect(parseResources("GPU = 1, MEM=2")).toEqual({ GPU: 1, MEM: 2 });
    expect(positiveInt("--n", "1e3")).toBe(1000);
  });

  it("timeoutMs takes what a timer can wait, and no more", () => {
    expect(timeoutMs("--timeout", String(MAX_TIMER_MS))).toBe(MAX_TIMER_MS);
    expect(() => timeoutMs("--timeout", String(MAX_TIMER_MS + 1))).toThrow(
      `--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${MAX_TIMER_MS + 1}`,
    );
    expect(() => timeoutMs("--timeout", "0")).toThrow(`--timeout ${MS_FORMS}, got 0`);
    expect(() => timeoutMs("--timeout", "25d")).toThrow(
      `--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got 25d`,
    );
  });

  it("timeoutMs reads a bare number as ms, and a number with a unit as a duration", () => {
    // "60s" was refused, and is what a Dask user types; "60" stays 60 ms, as scripts give it.
    expect(timeoutMs("--timeout", "60")).toBe(60);
    expect(timeoutMs("--timeout", "60s")).toBe(60_000);
    expect(timeoutMs("--timeout", "5m")).toBe(300_000);
  });

  it("durationMs reads Dask's durations, a bare number as seconds, up to what a timer can wait", () => {
    expect(durationMs("--lifetime", "1h")).toBe(3_600_000);
    expect(durationMs("--lifetime", "90")).toBe(90_000);
    // Half an hour, not 1.5 hours (Dask's parse_timedelta puts a 1 before the point).
    expect(durationMs("--lifetime", ".5h")).toBe(1_800_000);
    expect(durationMs("--lifetime", "24d")).toBe(24 * 86_400_000);
    expect(durationMs("--lifetime", `${MAX_TIMER_MS}ms`)).toBe(MAX_TIMER_MS);
    expect(() => durationMs("--lifetime", "25d")).toThrow(
      `--lifetime must be at most about 24.8 days (${MAX_TIMER_MS} ms), got 25d`,
    );
    expect(() => durationMs("--lifetime", "soon")).toThrow(
      /^--lifetime must be a duration such as 1h, 30m or 90s: /,
    );
  });

  it("positiveDurationMs refuses 0 in the option's words, saying how to have none", () => {
    expect(positiveDurationMs("--lifetime", "1ms")).toBe(1);
    // Refused by the Worker then, as "Worker option lifetimeMs must be a positive integer".
    for (const zero of ["0", "0s", "0.1ms"]) {
      expect(() => positiveDurationMs("--lifetime", zero), zero).toThrow(
        `--lifetime must be at least 1 ms (leave it out for none; Dask reads 0 so), got ${zero}`,
      );
    }
  });
});

describe("untilSignal", () => {
  type Listeners = Map<NodeJS.Signals, readonly NodeJS.SignalsListener[]>;
  const snapshot = (): Listeners =>
    new Map((["SIGINT", "SIGTERM"] as const).map((s) => [s, [...process.listeners(s)]]));
  /** The SIGINT and SIGTERM listeners added since `before`, removed: what a test leaves behind. */
  function removeAdded(before: Listeners): NodeJS.SignalsListener[] {
    const added: NodeJS.SignalsListener[] = [];
    for (const [signal, listeners] of before) {
      for (const l of process.listeners(signal)) {
        if (listeners.includes(l)) continue;
        added.push(l);
        process.removeListener(signal, l);
      }
    }
    return added;
  }

  it("resolves with the signal, or null once stopped, and leaves no handler behind", async () => {
    const before = snapshot();
    const signalled = untilSignal();
    process.emit("SIGTERM", "SIGTERM");
    expect(await signalled).toBe("SIGTERM");
    let stop!: () => void;
    const stopped = untilSignal(new Promise<void>((r) => (stop = r)));
    stop();
    expect(await stopped).toBeNull();
    expect(removeAdded(before)).toEqual([]);
  });

  it("with ignoreRepeats, keeps later signals from ending the process while it closes", async () => {
    const before = snapshot();
    const signalled = untilSignal(undefined, ["SIGINT", "SIGTERM"], true);
    process.emit("SIGINT", "SIGINT");
    expect(await signalled).toBe("SIGINT");
    // One handler that does nothing on each signal: without it a second Ctrl-C kills the process.
    const left = removeAdded(before);
    expect(left).toHaveLength(2);
  });
});
