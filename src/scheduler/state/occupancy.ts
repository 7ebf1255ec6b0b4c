/**
 * A worker's occupancy: the expected seconds of its processing tasks that have
 * not seceded, each at its function's current expected duration (Dask's
 * `WorkerState.occupancy`, computed from `task_prefix_count` and the prefixes'
 * current averages). A backlog assigned on a guess (`unknownTaskDuration`)
 * counts what its tasks are now expected to take, not the guess, for
 * placement, work stealing and adaptive scaling alike.
 *
 * Each worker counts its tasks by function (`countsByFn`). Dask sums over them
 * at every read; here the sum is kept, stamped with the `Durations` epoch it
 * was taken at: assigning or finishing a task corrects it in O(1) while no
 * expected duration changed, and the first read after one did sums again over
 * the worker's functions. A finished task thus costs O(1) however many
 * workers run its function (re-costing each of them at every finish made 50,000
 * tasks of one function on 1,000 workers cost the scheduler 1.7× the CPU), and
 * reads between two finishes cost a field's. Reads are rare: with queuing, root
 * tasks are placed without one; the benchmark graphs read 1 to 3 a task (see
 * docs/benchmarks.md, *The scheduler's occupancy*).
 */

import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** `ts`, just assigned to `ws`, counts towards its occupancy: returns the seconds it adds. */
export function occupancyAdd(s: SchedulerState, ts: TaskState, ws: WorkerInfo): number {
  const fn = ts.runSpec?.fn;
  const duration = s.durations.expected(fn);
  if (fn === undefined) ws.unnamedCount++;
  else ws.countsByFn.set(fn, (ws.countsByFn.get(fn) ?? 0) + 1);
  if (ws.occupancyEpoch === s.durations.epoch) ws.occupancySum += duration;
  return duration;
}

/**
 * `ts`, processing on `ws` and counted there, no longer counts: it left
 * processing, or seceded.
 */
export function occupancyRemove(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  const fn = ts.runSpec?.fn;
  if (fn === undefined) ws.unnamedCount--;
  else {
    const n = ws.countsByFn.get(fn) ?? 0;
    if (n > 1) ws.countsByFn.set(fn, n - 1);
    else ws.countsByFn.delete(fn);
  }
  if (ws.occupancyEpoch !== s.durations.epoch) return; // summed afresh at the next read
  ws.occupancySum -= s.durations.expected(fn);
  // Rounding must not leave a worker with nothing to do looking busy (or below zero).
  if (ws.occupancySum < 0 || (ws.countsByFn.size === 0 && ws.unnamedCount === 0)) {
    ws.occupancySum = 0;
  }
}

/** `ws.occupancy`: its kept sum, summed afresh if an expected duration changed since. */
export function currentOccupancy(ws: WorkerInfo): number {
  const d = ws.durations;
  if (ws.occupancyEpoch !== d.epoch) {
    let sum = ws.unnamedCount * d.unknown;
    for (const [fn, n] of ws.countsByFn) sum += n * d.expected(fn);
    ws.occupancySum = sum;
    ws.occupancyEpoch = d.epoch;
  }
  return ws.occupancySum;
}
