/**
 * A worker's occupancy: the expected seconds of its processing tasks that have
 * not seceded, each at its function's current expected duration (Dask's
 * occupancy, computed from `WorkerState.task_prefix_count` and the prefixes'
 * current averages). Dask reads the averages each time; here each worker's
 * total is kept, and corrected on every worker running a function whenever
 * what is learnt of that function changes its expected duration: a backlog
 * assigned on a guess (`unknownTaskDuration`) counts what its tasks are now
 * expected to take, not the guess, for placement, work stealing and adaptive
 * scaling alike. The cost moves: a measured duration costs one update per
 * worker running the function (50,000 finishes of one function on 1,000
 * workers: about 1.5 s more), where Dask pays a sum over the prefixes on a
 * worker at each read; reads stay a field's.
 */

import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** `ts`, just assigned to `ws`, counts towards its occupancy: returns the seconds it adds. */
export function occupancyAdd(s: SchedulerState, ts: TaskState, ws: WorkerInfo): number {
  const duration = s.taskDuration(ts);
  ws.occupancy += duration;
  const fn = ts.runSpec?.fn;
  if (fn !== undefined) {
    let counts = s.processingByFn.get(fn);
    if (counts === undefined) s.processingByFn.set(fn, (counts = new Map()));
    counts.set(ws, (counts.get(ws) ?? 0) + 1);
  }
  return duration;
}

/**
 * `ts`, processing on `ws` and counted there, no longer counts: it left
 * processing, or seceded. Call before `ws.processing` forgets it.
 */
export function occupancyRemove(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  const fn = ts.runSpec?.fn;
  if (fn !== undefined) {
    const counts = s.processingByFn.get(fn);
    const n = counts?.get(ws) ?? 0;
    if (counts !== undefined) {
      if (n > 1) counts.set(ws, n - 1);
      else counts.delete(ws);
      if (counts.size === 0) s.processingByFn.delete(fn);
    }
  }
  ws.occupancy -= s.taskDuration(ts);
  // Rounding must not leave a worker with nothing to do looking busy (or below zero).
  if (ws.occupancy < 0 || ws.processing.size === ws.longRunning.size + 1) ws.occupancy = 0;
}

/**
 * The expected duration of `fn` went from `before` to `after` seconds: each
 * worker's occupancy counts its processing tasks of `fn` at the new one.
 */
export function occupancyRecost(
  s: SchedulerState,
  fn: string,
  before: number,
  after: number,
): void {
  const diff = after - before;
  if (diff === 0) return;
  const counts = s.processingByFn.get(fn);
  if (counts === undefined) return;
  for (const [ws, n] of counts) {
    ws.occupancy += n * diff;
    if (ws.occupancy < 0) ws.occupancy = 0;
  }
}
