/**
 * The text reports: a failure in full (its details indented under it), the
 * shrinker's outcome when it found nothing smaller, and the summary table's
 * rows that show only when there is something to show.
 */

import { expect, test } from "vitest";
import { NO_FAULTS } from "./faults.ts";
import { formatFailure, formatRunLine, formatShrink, formatSummaryTable } from "./report.ts";
import { emptySummary } from "./runMany.ts";
import { type SimResult, simulate } from "./simulation.ts";

/** A small run that passed, as a failure with `details`. */
function failedWith(details: string): SimResult {
  const r = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS });
  return { ...r, ok: false, failure: { kind: "deadlock", message: "stuck", details } };
}

test("a failure in full shows each line of its details, indented", () => {
  const text = formatFailure(failedWith("key a: scheduler says waiting\n  scheduler story:"));
  expect(text).toContain(
    "\n  stuck\n  key a: scheduler says waiting\n    scheduler story:\n  replay: ",
  );
  expect(formatFailure(failedWith(""))).toMatch(/\n {2}stuck\n {2}replay: /);
});

test("a run line and a shrink count one worker, event or run in the singular", () => {
  const r = failedWith("");
  const one = {
    ...r,
    workers: 1,
    stats: { ...r.stats, events: 1, workerRestarts: 1 },
  } as SimResult;
  expect(formatRunLine(one)).toMatch(/, 1 worker, 1 event, t=.*, 1 worker restarted/);
  expect(
    formatRunLine({ ...one, workers: 2, stats: { ...one.stats, workerRestarts: 2 } } as SimResult),
  ).toMatch(/, 2 workers, 1 event, t=.*, 2 workers restarted/);
  expect(formatShrink({ original: r, smallest: r, tried: 1 })).toBe(
    "shrinking: no smaller failing case found (1 run tried)",
  );
});

test("a shrink that found nothing smaller says so, with the runs it tried", () => {
  const r = failedWith("");
  expect(formatShrink({ original: r, smallest: r, tried: 7 })).toBe(
    "shrinking: no smaller failing case found (7 runs tried)",
  );
  const smaller = { ...r, seed: 2 };
  expect(formatShrink({ original: r, smallest: smaller, tried: 7 })).toMatch(
    /^smallest failing case \(7 runs tried\): seed 2: FAILED \(deadlock\)/,
  );
});

test("the summary table shows the scatter rows from one scattered value, and a single failing seed", () => {
  const s = emptySummary();
  expect(formatSummaryTable(s)).not.toMatch(/scatter: |actors: |failing seeds/);
  s.scatter.values = 1;
  s.scatterRuns.values = 1;
  s.actors.actors = 1;
  s.actorRuns.actors = 1;
  s.failingSeeds.push(7);
  const table = formatSummaryTable(s);
  expect(table).toMatch(/scatter: values +1 in 1 run$/m);
  expect(table).toMatch(/actors: actors +1 in 1 run$/m);
  expect(table).toMatch(/\nfailing seeds: 7$/);
  s.failures.deadlock = 2;
  expect(formatSummaryTable(s)).toMatch(/\nfailure: deadlock +2\n/);
});

test("a run stuck on one wanted key says so in the singular", () => {
  const r = simulate({
    seed: 1,
    workload: "chain",
    tasks: 2,
    faults: NO_FAULTS,
    fireAndForget: 0,
    restart: 0,
    restartWorker: 0,
    stallTimeout: 5,
    // The scheduler never hears a task finish, so the chain's one wanted key stays pending.
    hooks: {
      schedulerStimulus: (_ctx, ev) =>
        ev.kind === "worker-message" && ev.msg.op === "task-finished" ? null : ev,
    },
  });
  expect(r.failure?.kind).toBe("deadlock");
  expect(r.failure?.message).toMatch(/: 1 wanted key still pending \(chain-1\)/);
});
