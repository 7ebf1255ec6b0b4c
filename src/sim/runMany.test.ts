import { expect, test } from "vitest";
import { NO_FAULTS } from "./faults.ts";
import { formatSummaryTable } from "./report.ts";
import { addResult, emptySummary, mergeSummary, runSeeds } from "./runMany.ts";
import { simulate } from "./simulation.ts";

test("mergeSummary keeps the lowest 100 failing seeds of both batches", () => {
  // Two soak threads with stride 2: one failed on every even seed, the other on every odd one.
  const a = emptySummary();
  const b = emptySummary();
  for (let i = 0; i < 100; i++) {
    a.failingSeeds.push(2 * i);
    b.failingSeeds.push(2 * i + 1);
  }
  const total = emptySummary();
  mergeSummary(total, a);
  mergeSummary(total, b);
  expect(total.failingSeeds).toEqual(Array.from({ length: 100 }, (_, i) => i));
});

test("the summary table shows the retirements of runs that only retired", () => {
  const s = emptySummary();
  s.replicate.retirements = 3;
  s.replicate.retired = 2;
  s.replicateRuns.retirements = 1;
  s.replicateRuns.retired = 1;
  const table = formatSummaryTable(s);
  expect(table).toMatch(/replicate: retirements +3 in 1 run$/m);
  expect(table).toMatch(/replicate: retired +2 in 1 run$/m);
});

test("addResult counts a run under a counter only when the counter is not zero in it", () => {
  const s = emptySummary();
  const plain = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS, actors: 0 });
  addResult(s, plain);
  addResult(s, plain);
  expect(s.runs).toBe(2);
  expect(Object.values(s.scatterRuns).every((n) => n === 0)).toBe(true);
  expect(Object.values(s.actorRuns).every((n) => n === 0)).toBe(true);
  expect(s.restartedRuns).toBe(0);
  const restarted = simulate({ seed: 1, tasks: 20, faults: NO_FAULTS, restart: 1 });
  expect(restarted.stats.restarts).toBe(1);
  addResult(s, restarted);
  expect(s.restartedRuns).toBe(1);
  const scattered = simulate({ seed: 1, workload: "scatter", tasks: 8, faults: NO_FAULTS });
  addResult(s, scattered);
  expect(s.scatterRuns.values).toBe(1);
  expect(s.scatter.values).toBe(scattered.stats.scatter.values);
});

test("failing runs: the first is kept, and at most 100 seeds are listed", () => {
  const s = emptySummary();
  const failing = simulate({ seed: 1, tasks: 4, variant: "wrong-value", faults: NO_FAULTS });
  expect(failing.ok).toBe(false);
  for (let i = 0; i < 101; i++) addResult(s, { ...failing, seed: 1 + i });
  expect(s.failed).toBe(101);
  expect(s.failures).toEqual({ "wrong-value": 101 });
  expect(s.failingSeeds).toHaveLength(100);
  expect(s.firstFailure?.seed).toBe(1);
});

test("mergeSummary keeps the failure of the lowest seed as the first", () => {
  const failing = simulate({ seed: 1, tasks: 4, variant: "wrong-value", faults: NO_FAULTS });
  const batch = (seed: number) => {
    const s = emptySummary();
    addResult(s, { ...failing, seed });
    return s;
  };
  for (const order of [
    [5, 3],
    [3, 5],
  ]) {
    const total = emptySummary();
    for (const seed of order) mergeSummary(total, batch(seed));
    expect(total.firstFailure?.seed, String(order)).toBe(3);
  }
});

test("runSeeds refuses a count or first seed that is not an integer ≥ 0", () => {
  // NaN and -1 ran no seed and "passed"; 1.5 ran two.
  const base = { tasks: 4, faults: NO_FAULTS };
  expect(() => runSeeds(base, 1, Number.NaN)).toThrow(
    new RangeError("count must be an integer ≥ 0, got NaN"),
  );
  expect(() => runSeeds(base, 1, -1)).toThrow("count must be an integer ≥ 0, got -1");
  expect(() => runSeeds(base, 1, 1.5)).toThrow("count must be an integer ≥ 0, got 1.5");
  expect(() => runSeeds(base, 0.5, 1)).toThrow("from must be an integer ≥ 0, got 0.5");
  expect(() => runSeeds(base, Number.MAX_SAFE_INTEGER, 2)).toThrow(/pass 9007199254740991/);
  expect(runSeeds(base, 1, 0).runs).toBe(0);
  expect(runSeeds(base, Number.MAX_SAFE_INTEGER, 1).runs).toBe(1);
});
