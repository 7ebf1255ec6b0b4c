/**
 * The inline executor: tasks run on the worker's main thread. No thread hop and
 * no copy (results are kept by reference), so it suits tiny tasks and tests; a
 * synchronous task blocks the worker's event loop while it runs, and
 * `nthreads` only limits how many asynchronous tasks are in progress at once.
 */

import type { ExecuteJob, ExecuteOutcome, Executor, RunControl } from "./executor.ts";
import { raceSignal } from "./raceSignal.ts";
import { runTask } from "./runTask.ts";

/** Runs tasks on the calling thread. */
export class InlineExecutor implements Executor {
  readonly kind = "inline";
  private closed = false;

  /** Import the task modules (file URLs) on this thread. */
  static async start(taskModules: readonly string[]): Promise<InlineExecutor> {
    for (const url of taskModules) await import(url);
    return new InlineExecutor();
  }

  async run(job: ExecuteJob, control: RunControl, signal: AbortSignal): Promise<ExecuteOutcome> {
    signal.throwIfAborted();
    if (this.closed) throw new Error("executor is closed");
    // Start in a new microtask, never inside the caller's synchronous code.
    await Promise.resolve();
    signal.throwIfAborted();
    // A task cannot be stopped on this thread: once aborted, stop waiting for it.
    return await raceSignal(runTask(job.key, job.fn, job.args, control), signal);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
