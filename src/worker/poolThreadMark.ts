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
 * Kept on `globalThis`, as the task registry is: a task module may import
 * another copy of weft than the thread runs.
 */

const POOL_THREAD_KEY = Symbol.for("weft.poolThread");

/** Mark this thread as a worker's pool thread (before it imports task modules). */
export function markPoolThread(): void {
  (globalThis as Record<symbol, unknown>)[POOL_THREAD_KEY] = true;
}

/** Throw if this is a worker's pool thread: `what` (a cluster, a worker) must not start here. */
export function refuseOnPoolThread(what: string): void {
  if ((globalThis as Record<symbol, unknown>)[POOL_THREAD_KEY] !== true) return;
  throw new Error(
    `${what} was called on a pool thread of a worker, which runs tasks: a task module ` +
      "(or a module it imports) starts a cluster or a worker, as a program whose own module " +
      "is among its task modules (taskModules: [import.meta.url]) does, so each pool thread " +
      "importing it would start threads of its own, without end. Define the tasks in a module " +
      'of their own, or start only on the main thread (isMainThread, from "node:worker_threads")',
  );
}
