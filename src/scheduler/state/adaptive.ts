/**
 * How many workers the work calls for (Dask's `Scheduler.adaptive_target`),
 * for adaptive scaling: enough to finish the work assigned and waiting within a
 * target duration, given the tasks' expected durations, and more when the
 * results outgrow the workers' memory limits; fewer only by the workers that
 * run nothing and whose memory the results held do not need.
 */

import { isRetiring } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** Tasks waiting for a worker whose expected durations are summed (Dask samples 100). */
const SAMPLED = 100;

/**
 * The number of workers the cluster should have to run its work in about
 * `targetDuration` seconds (Dask's `adaptive_target`). Workers being retired
 * are not counted.
 *
 * - The seconds of work assigned to the workers (their occupancy) and of the
 *   tasks waiting for one (queued, or unrunnable for want of a running worker:
 *   the expected durations of up to 100 of them, scaled to all), divided by
 *   `targetDuration`, give the threads wanted; never more than the tasks
 *   there are to run, so that a few long tasks do not ask for many workers.
 *   Tasks no running worker may run (restricted to others, or to resources
 *   none supplies) are not counted: a worker like those would not run them.
 * - Threads become workers at the cluster's mean threads per worker; while
 *   any task waits, at least one.
 * - Results held beyond 60% of the workers' memory limits (those that
 *   registered one) ask for twice the workers there are, as Dask's do.
 * - Below the workers there are, the target is those there are less those
 *   that may be spared ({@link spareable}): a busy worker, or one an actor
 *   lives on, is not given up, nor one whose going would leave the limits of
 *   those left short of twice the results held.
 * - Only the workers `closable` says may be closed (by default, all) are
 *   given up: adaptive scaling counts in the workers its cluster did not
 *   start, and cannot stop them.
 */
export function adaptiveTarget(
  s: SchedulerState,
  targetDuration: number,
  closable: (ws: WorkerInfo) => boolean = () => true,
): number {
  if (!(targetDuration > 0))
    throw new RangeError(`targetDuration must be > 0, got ${targetDuration}`);
  const workers = [...s.workers.values()].filter((ws) => !isRetiring(s, ws));
  let sampled = 0;
  let waitingSeconds = 0;
  for (const ts of s.queued) {
    if (sampled++ >= SAMPLED) break;
    waitingSeconds += s.taskDuration(ts);
  }
  const unrunnable = unrunnableForWantOfWorkers(s);
  for (const ts of unrunnable) {
    if (sampled++ >= SAMPLED) break;
    waitingSeconds += s.taskDuration(ts);
  }
  const waiting = s.queued.size + unrunnable.length;
  if (waiting > SAMPLED) waitingSeconds *= waiting / SAMPLED;

  let occupancy = 0;
  let running = 0;
  let threads = 0;
  let limit = 0;
  let held = 0;
  for (const ws of workers) {
    occupancy += ws.occupancy;
    running += ws.processing.size;
    threads += ws.nthreads;
    limit += ws.memoryLimit ?? 0;
    held += ws.nbytes;
  }
  let cpu = Math.ceil((occupancy + waitingSeconds) / targetDuration);
  cpu = Math.min(cpu, waiting + running);
  // A task waiting keeps a worker (or asks for one, as Dask's does when there
  // are none): one that none may run would otherwise have the cluster give up
  // its last idle worker, and start it again, for as long as the task waits.
  const atLeast = s.queued.size + s.unrunnable.size > 0 ? 1 : 0;
  if (workers.length > 0) cpu = Math.ceil((cpu / threads) * workers.length);
  // Dask's memory term: results beyond 60% of the workers' limits ask for twice the workers.
  const memory = limit > 0 && held > 0.6 * limit ? 2 * workers.length : 0;
  const target = Math.max(cpu, memory, atLeast);
  if (target >= workers.length) return target;
  return Math.max(workers.length - spareable(workers, limit, held, closable), atLeast);
}

/**
 * How many of `workers` (those not being retired, with `limit` bytes of
 * memory limits and holding `held` bytes) that `closable` allows may be given up (Dask's
 * `workers_to_close()`, as its `adaptive_target` calls it): those running no
 * task and holding no actor (its retirement fails: an actor cannot move),
 * fewest bytes held first, as `retire-workers` given `n` picks them, each as
 * long as the limits of the workers left add up to twice the bytes held
 * (Dask's `memory_ratio`: down to one worker, results over 60% of its limit
 * would ask for two again at the next look, and so on). Without any limit,
 * every one of them, but one while results are held and none would be left
 * (none busy, none that may not be closed): its retirement would fail, its
 * results having nowhere to go (Dask then gives up none while anything is held).
 */
function spareable(
  workers: readonly WorkerInfo[],
  limit: number,
  held: number,
  closable: (ws: WorkerInfo) => boolean,
): number {
  const idle = workers.filter(
    (ws) => ws.processing.size === 0 && ws.actors.size === 0 && closable(ws),
  );
  if (limit === 0)
    return held > 0 && idle.length === workers.length ? idle.length - 1 : idle.length;
  idle.sort(
    (a, b) => a.nbytes - b.nbytes || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0),
  );
  let left = limit;
  let spared = 0;
  for (const ws of idle) {
    left -= ws.memoryLimit ?? 0;
    if (left < 2 * held) break;
    spared++;
  }
  return spared;
}

/**
 * The unrunnable tasks that more workers would run: those waiting for any
 * running worker (none runs, or all are paused), not those restricted to
 * workers (strictly) or to resources. While a worker runs, only those are
 * unrunnable, because none of the workers there may run them, and a worker
 * started like them would not either: counted, 1,000 tasks needing a `GPU`
 * no worker declares asked for 100 idle workers, kept for as long as the
 * tasks waited. (Dask counts no unrunnable task, but asks for one worker
 * when there are none.)
 */
function unrunnableForWantOfWorkers(s: SchedulerState): TaskState[] {
  if (s.running.size > 0) return [];
  const out: TaskState[] = [];
  for (const ts of s.unrunnable.keys()) {
    const named = ts.workerRestrictions;
    if (ts.resourceRestrictions === null && (named === null || named.loose)) out.push(ts);
  }
  return out;
}
