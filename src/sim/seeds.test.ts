/**
 * weft's main reliability test: 1,000 seeded clusters with every fault on,
 * small enough to run in well under two minutes. A failure prints the run in
 * full, the command that replays it, and the smallest failing case.
 */

import { expect, test } from "vitest";
import { formatFailure, formatShrink, formatSummaryTable } from "./report.ts";
import { runSeeds } from "./runMany.ts";
import { shrink } from "./shrink.ts";

const SEEDS = 1_000;
const CHUNKS = 4;

for (let c = 0; c < CHUNKS; c++) {
  const from = 1 + (c * SEEDS) / CHUNKS;
  const count = SEEDS / CHUNKS;
  test(`seeds ${from}..${from + count - 1}: every cluster finishes right, with all faults on`, () => {
    const summary = runSeeds({ workload: "mix", workers: 3, tasks: 24 }, from, count);
    const first = summary.firstFailure;
    const report =
      first === null
        ? ""
        : `${formatSummaryTable(summary)}\n${formatFailure(first)}\n${formatShrink(shrink(first, { budget: 40 }))}`;
    expect(summary.failed, report).toBe(0);
    expect(summary.runs).toBe(count);
    // Every fault was exercised somewhere in the chunk.
    for (const [kind, n] of Object.entries(summary.faults)) {
      expect(n, `fault ${kind} never injected`).toBeGreaterThan(0);
    }
  });
}
