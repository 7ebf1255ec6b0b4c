/**
 * The inline executor: tasks run on the worker's main thread, when the worker
 * starts them. No thread hop and no copy (results are kept by reference, once
 * checked to be data, as the other paths would copy them), so it suits tiny
 * tasks and tests; a synchronous task blocks the worker's event
 * loop while it runs, and `nthreads` only limits how many asynchronous tasks
 * are in progress at once.
 */

import { rejectWhenIdle } from "../util/loopIdle.ts";
import type { ExecuteJob, ExecuteOutcome, Executor, RunControl } from "./executor.ts";
import { importTaskModule } from "./importTaskModule.ts";
import { raceSignal } from "./raceSignal.ts";
import { startTask } from "./runTask.ts";
import { taskFunctionNames } from "./taskRegistry.ts";

/**
 * Import the task module `url`; its failure names it, as a pool thread's does
 * (`threadMain.ts`): what Node.js throws (a SyntaxError, an error thrown as the
 * module was evaluated) may not, and a worker imports several.
 */
async function importNamed(url: string): Promise<void> {
  // On this thread, the module may be the program's own, waiting at a
  // top-level await for the cluster that imports it: its import never ends.
  const idle = rejectWhenIdle(
    () =>
      new Error(
        "its import never finished: nothing was left to run while the module waited at a " +
          "top-level await (a program whose own module is among its task modules, " +
          "taskModules: [import.meta.url], waiting for the cluster it starts): define the " +
          "tasks in a module of their own",
      ),
  );
  try {
    await Promise.race([importTaskModule(url), idle.promise]);
  } catch (err) {
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new Error(`cannot import the task module ${url}: ${why}`, { cause: err });
  } finally {
    idle.stop();
  }
}

/** Runs tasks on the calling thread. */
export class InlineExecutor implements Executor {
  readonly kind = "inline";
  private closed = false;

  private constructor(public taskNames: readonly string[]) {}

  /** Import more task modules on this thread (a module imported already is not again). */
  async loadModules(urls: readonly string[]): Promise<readonly string[]> {
    if (this.closed) throw new Error("executor is closed");
    for (const url of urls) await importNamed(url);
    this.taskNames = taskFunctionNames();
    return this.taskNames;
  }

  /** Import the task modules (file URLs) on this thread. */
  static async start(taskModules: readonly string[]): Promise<InlineExecutor> {
    for (const url of taskModules) await importNamed(url);
    return new InlineExecutor(taskFunctionNames());
  }

  /**
   * Runs the task at once: a synchronous task's outcome is returned as it is
   * (no promise, no extra turn), an asynchronous task's as a promise.
   */
  run(
    job: ExecuteJob,
    control: RunControl,
    signal: AbortSignal,
  ): ExecuteOutcome | Promise<ExecuteOutcome> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(new Error("executor is closed"));
    const outcome = startTask(job, control);
    // A task cannot be stopped on this thread: once aborted, stop waiting for it.
    return outcome instanceof Promise ? raceSignal(outcome, signal) : outcome;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
