/**
 * weft's main reliability test, shared by seeds.test.ts and seedsHigh.test.ts:
 * 1,000 seeded clusters with every fault on, in four chunks of 250. Two files of
 * two chunks each, as the run's last files (vitest starts the larger files first,
 * these are its smallest): one file of the four ran alone for seconds at the end.
 * A failure prints the run in full, the command that replays it, and the smallest
 * failing case.
 */

import { expect, test } from "vitest";
import { formatFailure, formatShrink, formatSummaryTable } from "./report.ts";
import { runSeeds } from "./runMany.ts";
import { shrink } from "./shrink.ts";

const SEEDS = 1_000;
const CHUNKS = 4;

/** Declares the tests of the chunks `chunks` (of 0..3). */
export function seedChunkTests(chunks: readonly number[]): void {
  for (const c of chunks) {
    if (!Number.isInteger(c) || c < 0 || c >= CHUNKS) {
      throw new RangeError(`seedChunkTests: chunk ${c} is not one of 0..${CHUNKS - 1}`);
    }
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
}
