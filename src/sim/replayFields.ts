/** What tests compare to tell that a run replays as it did before a change. */

import type { SimResult } from "./simulation.ts";

/**
 * The counters of a run that change when anything it did changes: tests keep
 * a digest of them, taken before a change that must not alter old seeds.
 */
export function replayFields(r: SimResult): unknown[] {
  const s = r.stats;
  return [
    r.ok,
    r.workload,
    s.events,
    s.schedulerStimuli,
    s.workerStimuli,
    s.executions,
    s.transfers,
    s.virtualTime,
    s.faults,
  ];
}
