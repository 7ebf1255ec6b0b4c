/**
 * Whether this thread is a pool thread of a worker, where task modules are
 * imported: a program that gives its own module as a task module
 * (`taskModules: [import.meta.url]`, its tasks defined beside the code that
 * starts the cluster) would start, on every pool thread importing it, a cluster
 * of its own, whose threads import it again, without end: threads multiplied
 * until memory ran out, and the program's own start never finished. Python's
 * multiprocessing refuses the like ("An attempt has been made to start a new
 * process before the current process has finished its bootstrapping phase").
 *
 * A running task's own code may start one all the same, as Dask lets a task start
 * a `LocalCluster(processes=False)`: that is no import, and a module imported by
 * the nested cluster's threads that starts one is refused there, so that nothing
 * recurses unless the task's code itself asks for it, once per task.
 *
 * Kept on `globalThis`, as the task registry is: a task module may import
 * another copy of weft than the thread runs.
 */

import { inRunningTask } from "./taskContext.ts";

const POOL_THREAD_KEY = Symbol.for("weft.poolThread");

/**
 * The workers of a cluster a task started (checked as it started): their starts,
 * later and out of the task's synchronous call, are that cluster's, not an import's.
 */
const allowedWorkers = new WeakSet<object>();

/** Mark this thread as a worker's pool thread (before it imports task modules). */
export function markPoolThread(): void {
  (globalThis as Record<symbol, unknown>)[POOL_THREAD_KEY] = true;
}

/** `worker` is a cluster's that passed {@link refuseOnPoolThread}: its own start is not checked. */
export function allowOnPoolThread(worker: object): void {
  allowedWorkers.add(worker);
}

/**
 * Throw if this is a worker's pool thread and no task's code is running (an import
 * of a task module, or what it left running): `what` (a cluster, a worker) must not
 * start there. `starting`, a worker of a cluster already let start, is not refused.
 */
export function refuseOnPoolThread(what: string, starting?: object): void {
  if ((globalThis as Record<symbol, unknown>)[POOL_THREAD_KEY] !== true) return;
  if (inRunningTask() || (starting !== undefined && allowedWorkers.has(starting))) return;
  throw new Error(
    `${what} was called on a pool thread of a worker, outside a running task: a task module ` +
      "(or a module it imports) starts a cluster or a worker, as a program whose own module " +
      "is among its task modules (taskModules: [import.meta.url]) does, so each pool thread " +
      "importing it would start threads of its own, without end. Define the tasks in a module " +
      'of their own, or start only on the main thread (isMainThread, from "node:worker_threads"); ' +
      "a task function may start one from its own code",
  );
}
