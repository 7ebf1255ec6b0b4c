/**
 * How many workers the work calls for (Dask's `Scheduler.adaptive_target`),
 * for adaptive scaling: enough to finish the work assigned and waiting within a
 * target duration, given the tasks' expected durations, and more when the
 * results outgrow the workers' memory limits; fewer only by the workers that
 * run nothing.
 */

import { isRetiring } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";

/** Tasks waiting for a worker whose expected durations are summed (Dask samples 100). */
const SAMPLED = 100;

/**
 * The number of workers the cluster should have to run its work in about
 * `targetDuration` seconds (Dask's `adaptive_target`). Workers being retired
 * are not counted.
 *
 * - The seconds of work assigned to the workers (their occupancy) and of the
 *   tasks waiting for one (queued or unrunnable: the expected durations of up
 *   to 100 of them, scaled to all), divided by `targetDuration`, give the
 *   threads wanted; never more than the tasks there are to run, so that a few
 *   long tasks do not ask for many workers.
 * - Threads become workers at the cluster's mean threads per worker; with no
 *   worker, waiting tasks ask for one.
 * - Results held beyond 60% of the workers' memory limits (those that
 *   registered one) ask for twice the workers there are, as Dask's do.
 * - Below the workers there are, the target is those there are less those
 *   running nothing: a busy worker is not given up.
 */
export function adaptiveTarget(s: SchedulerState, targetDuration: number): number {
  if (!(targetDuration > 0))
    throw new RangeError(`targetDuration must be > 0, got ${targetDuration}`);
  const workers = [...s.workers.values()].filter((ws) => !isRetiring(s, ws));
  let sampled = 0;
  let waitingSeconds = 0;
  for (const ts of s.queued) {
    if (sampled++ >= SAMPLED) break;
    waitingSeconds += s.taskDuration(ts);
  }
  for (const ts of s.unrunnable.keys()) {
    if (sampled++ >= SAMPLED) break;
    waitingSeconds += s.taskDuration(ts);
  }
  const waiting = s.queued.size + s.unrunnable.size;
  if (waiting > SAMPLED) waitingSeconds *= waiting / SAMPLED;

  let occupancy = 0;
  let running = 0;
  let threads = 0;
  let idle = 0;
  let limit = 0;
  let held = 0;
  for (const ws of workers) {
    occupancy += ws.occupancy;
    running += ws.processing.size;
    threads += ws.nthreads;
    if (ws.processing.size === 0) idle++;
    limit += ws.memoryLimit ?? 0;
    held += ws.nbytes;
  }
  let cpu = Math.ceil((occupancy + waitingSeconds) / targetDuration);
  cpu = Math.min(cpu, waiting + running);
  if (workers.length > 0) cpu = Math.ceil((cpu / threads) * workers.length);
  else if (waiting > 0) cpu = Math.max(1, cpu);
  // Dask's memory term: results beyond 60% of the workers' limits ask for twice the workers.
  const memory = limit > 0 && held > 0.6 * limit ? 2 * workers.length : 0;
  const target = Math.max(cpu, memory);
  if (target >= workers.length) return target;
  return workers.length - idle;
}
