import { expect, test } from "vitest";
import { formatSummaryTable } from "./report.ts";
import { emptySummary, mergeSummary } from "./runMany.ts";

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
  expect(table).toMatch(/replicate: retirements +3 in 1 runs/);
  expect(table).toMatch(/replicate: retired +2 in 1 runs/);
});
