import { describe, expect, test } from "vitest";
import {
  DEFAULT_FAULT_RATES,
  FAULT_KINDS,
  formatFaults,
  NO_FAULTS,
  parseFaults,
} from "./faults.ts";
import { resolveSimOptions } from "./options.ts";

describe("parseFaults refuses what it cannot read", () => {
  test("an empty rate is refused, not read as 0", () => {
    expect(() => parseFaults("death=")).toThrow(
      "bad rate for fault death: '' (expected a number ≥ 0)",
    );
  });
  test("a rate too small for a number, or not decimal, is refused, not read as 0 or taken", () => {
    expect(() => parseFaults("death=1e-400")).toThrow(
      "bad rate for fault death: '1e-400' (too small to tell from 0, which turns the fault off)",
    );
    expect(() => parseFaults("death=0x1")).toThrow("bad rate for fault death: '0x1'");
    expect(parseFaults("death=0,steal=2.5e-3")).toMatchObject({ death: 0, steal: 0.0025 });
  });
  test("an empty list is refused, not read as none", () => {
    expect(() => parseFaults("")).toThrow("empty fault list: give all, none or kind[=rate],…");
    expect(() => parseFaults("  ")).toThrow(/empty fault list/);
  });
  test("a part with two '=' is refused, not cut short", () => {
    expect(() => parseFaults("death=1=5")).toThrow("bad rate for fault death: '1=5'");
  });
  test("a per-opportunity rate is a probability, a per-second rate is not", () => {
    expect(() => parseFaults("network=2")).toThrow(/network: '2' \(expected a probability/);
    expect(() => parseFaults("death=1e9")).toThrow(
      /death: '1e9' \(expected at most 100 a second\)/,
    );
    expect(parseFaults("death=100").death).toBe(100);
    expect(() => parseFaults("error=1.5")).toThrow(/probability/);
    expect(parseFaults("network=0.999").network).toBe(0.999);
    expect(parseFaults("error=1").error).toBe(1);
    expect(parseFaults("death=5,steal=10")).toEqual({ ...NO_FAULTS, death: 5, steal: 10 });
  });
  test("a certainty of a fault that leaves no way to finish is refused: the run would fail with no bug", () => {
    // network=1 and busy=1 deadlocked `weft sim --tasks 20`, reschedule=1 livelocked it.
    for (const kind of ["network", "busy", "reschedule"]) {
      expect(() => parseFaults(`${kind}=1`)).toThrow(
        new RegExp(`^bad rate for fault ${kind}: '1' \\(a certainty: .*; give less than 1\\)$`),
      );
    }
    expect(() => resolveSimOptions({ seed: 1, faults: { ...NO_FAULTS, busy: 1 } })).toThrow(
      /^faults\.busy: .*a certainty/,
    );
  });
  test("none stands alone; all comes first, followed by the rates that change it", () => {
    expect(() => parseFaults("none,death")).toThrow(
      "'none' stands alone: it cannot be combined with other faults",
    );
    expect(() => parseFaults("death,all")).toThrow(/'all' comes first, then the rates/);
    expect(parseFaults(" all ")).toEqual(DEFAULT_FAULT_RATES);
    // Every fault but slow, and death twice as often.
    expect(parseFaults("all, slow=0,death=2")).toEqual({
      ...DEFAULT_FAULT_RATES,
      slow: 0,
      death: 2,
    });
    expect(formatFaults(parseFaults("all,slow=0"))).toBe(
      FAULT_KINDS.filter((k) => k !== "slow").join(","),
    );
    // A bare fault after all would change nothing; twice, one rate would be lost.
    expect(() => parseFaults("all,death")).toThrow("'all' already runs death at its default rate");
    expect(() => parseFaults("all,slow=0,slow=0.1")).toThrow("fault slow is named twice");
    expect(() => parseFaults("all,all")).toThrow(/'all' comes first/);
  });
  test("an empty name and a fault named twice are refused", () => {
    expect(() => parseFaults("death,,network")).toThrow("empty fault name in ''");
    expect(() => parseFaults("death,death=2")).toThrow("fault death is named twice");
  });
  test("fetch-error is a fault per gather, on in all", () => {
    expect(parseFaults("fetch-error")).toEqual({ ...NO_FAULTS, "fetch-error": 0.01 });
    expect(parseFaults("network,fetch-error=1")).toEqual({
      ...NO_FAULTS,
      network: 0.03,
      "fetch-error": 1,
    });
    expect(() => parseFaults("fetch-error=1.5")).toThrow(
      /fetch-error: '1.5' \(expected a probability/,
    );
    expect(parseFaults("all")["fetch-error"]).toBe(0.01);
    expect(formatFaults(parseFaults("death,fetch-error=0.5"))).toBe("death,fetch-error=0.5");
  });
  test("spaces around names and rates are ignored", () => {
    expect(parseFaults(" death , network = 0.1 ")).toEqual({
      ...NO_FAULTS,
      death: 0.8,
      network: 0.1,
    });
  });
  test("exactly the per-gather and per-execution faults take a probability; the others a rate per second", () => {
    const probabilities = [
      "network",
      "busy",
      "slow",
      "fetch-error",
      "error",
      "secede",
      "reschedule",
    ];
    for (const kind of FAULT_KINDS) {
      if (probabilities.includes(kind)) {
        expect(() => parseFaults(`${kind}=1.5`), kind).toThrow(/expected a probability/);
      } else {
        expect(parseFaults(`${kind}=1.5`)[kind], kind).toBe(1.5);
      }
    }
  });
  test("an unknown fault lists the known ones", () => {
    expect(() => parseFaults("meteor")).toThrow(
      /unknown fault 'meteor'; known: death, .*partition \(or all, or none\)/,
    );
  });
});

test("simulate's options refuse a fault rate out of range too", () => {
  expect(() => resolveSimOptions({ seed: 1, faults: { ...NO_FAULTS, busy: 3 } })).toThrow(
    "faults.busy: expected a probability between 0 and 1, got 3",
  );
});

test("the default rates are docs/sim.md's Faults table", () => {
  expect(DEFAULT_FAULT_RATES).toEqual({
    death: 0.8,
    partition: 0.2,
    network: 0.03,
    busy: 0.05,
    slow: 0.05,
    "fetch-error": 0.01,
    error: 0.01,
    reschedule: 0.01,
    secede: 0.03,
    steal: 2,
    pause: 0.5,
  });
});

test("parseFaults refuses a spec that is not a string, saying what it takes", () => {
  for (const [spec, shown] of [
    [null, "null"],
    [5, "5"],
  ] as const) {
    expect(() => parseFaults(spec as never)).toThrow(
      new TypeError(
        `parseFaults: the spec must be a string (all, none or kind[=rate],…), got ${shown}`,
      ),
    );
  }
});
