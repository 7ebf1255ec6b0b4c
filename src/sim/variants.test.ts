/**
 * Proof that the simulator can fail: each deliberately broken variant is
 * reported within a few seeds, with the failure it should cause, and the
 * failing seed replays to exactly the same failure.
 */

import { describe, expect, test } from "vitest";
import type { FailureKind } from "./failure.ts";
import { NO_FAULTS } from "./faults.ts";
import type { SimOptions } from "./options.ts";
import { shrink } from "./shrink.ts";
import { type SimResult, simulate } from "./simulation.ts";
import { VARIANTS } from "./variants.ts";

/** What each variant must be caught as, and the options that give it a chance to show. */
const EXPECT: Record<string, { kinds: FailureKind[]; options: Omit<SimOptions, "seed"> }> = {
  "forget-lost-keys": {
    kinds: ["deadlock"],
    options: { faults: { ...NO_FAULTS, death: 1 }, stallTimeout: 10 },
  },
  "drop-gather-completion": {
    kinds: ["deadlock", "leak"],
    options: { faults: NO_FAULTS, stallTimeout: 10 },
  },
  "drop-task-finished": { kinds: ["deadlock"], options: { faults: NO_FAULTS, stallTimeout: 10 } },
  "wrong-value": { kinds: ["wrong-value"], options: {} },
  "ignore-worker-death": {
    kinds: ["deadlock"],
    options: { faults: { ...NO_FAULTS, death: 1 }, stallTimeout: 10 },
  },
  "ignore-fetch-failure": {
    kinds: ["deadlock"],
    options: { faults: { ...NO_FAULTS, "fetch-error": 0.2 }, stallTimeout: 10 },
  },
  "corrupt-occupancy": { kinds: ["invalid-state"], options: {} },
};

function firstFailure(variant: string, options: Omit<SimOptions, "seed">): SimResult | null {
  for (let seed = 1; seed <= 30; seed++) {
    const r = simulate({ ...options, seed, variant });
    if (!r.ok) return r;
  }
  return null;
}

describe("broken variants are caught, with a seed that reproduces them", () => {
  for (const v of VARIANTS) {
    test(v.name, () => {
      const want = EXPECT[v.name];
      expect(want, `no expectation for variant ${v.name}`).toBeDefined();
      const r = firstFailure(v.name, want.options);
      expect(r, `${v.name} was never caught`).not.toBeNull();
      if (r === null) return;
      expect(want.kinds).toContain(r.failure?.kind);
      expect(r.command).toContain(`--seed ${r.seed}`);
      expect(r.command).toContain(`--variant ${v.name}`);
      const again = simulate({ ...want.options, seed: r.seed, variant: v.name });
      expect(again.failure).toEqual(r.failure);
      expect(again.stats.events).toBe(r.stats.events);
    });
  }

  test("the real cluster passes the same seeds", () => {
    for (let seed = 1; seed <= 10; seed++) {
      const r = simulate({ seed, faults: { ...NO_FAULTS, death: 1 }, stallTimeout: 10 });
      expect(r.ok, r.failure?.message).toBe(true);
    }
  });
});

test("shrink keeps a run's custom hooks, given as a factory, and refuses without them", () => {
  const variant = VARIANTS.find((v) => v.name === "wrong-value");
  if (variant === undefined) throw new Error("no wrong-value variant");
  const failing = simulate({ seed: 1, hooks: variant.hooks() });
  expect(failing.ok).toBe(false);
  expect(() => shrink(failing, { budget: 10 })).toThrow(
    /custom hooks, which its result does not hold/,
  );
  const s = shrink(failing, { budget: 40, hooks: variant.hooks });
  expect(s.smallest).not.toBe(s.original);
  expect(s.smallest.failure?.kind).toBe(failing.failure?.kind);
  expect(s.smallest.command).toContain("custom hooks");
});
