/**
 * What task code can ask of the worker running it: {@link secede} and
 * {@link rejoin} (Dask's), {@link currentTaskKey}, and {@link Reschedule}.
 * Works the same on a pool thread and on the main thread (inline executor).
 *
 * A task that waits for other tasks must not hold a thread meanwhile, or a
 * worker whose threads all wait would deadlock (a task function that calls
 * them after an `await` must be declared `async`):
 *
 * ```ts
 * defineTask("waitForOthers", async (...) => {
 *   secede();              // leave the pool: another task may start in this slot
 *   const v = await somethingOtherTasksProduce();
 *   await rejoin();        // wait for a free slot before computing on
 *   return compute(v);
 * });
 * ```
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** The running task's link to its worker. */
export interface TaskRuntime {
  /** The running task's key. */
  readonly key: string;
  /** Leave the thread pool (see {@link secede}). */
  secede(): void;
  /** Take a slot of the pool again (see {@link rejoin}). */
  rejoin(): Promise<void>;
  /** The client of the task's code, connected on first use (see `getClient()` in the client). */
  client(): Promise<unknown>;
  /**
   * A message the task sent without waiting (a `print`): its result is
   * reported once this has settled, so that the message reaches the
   * scheduler first. Optional: an actor's call does not wait.
   */
  track?(sent: Promise<unknown>): void;
}

/** This module, whose frames run tasks: cut from task errors' tracebacks (see `taskFrames.ts`). */
export const TASK_CONTEXT_MODULE = import.meta.url;

/** Where the running task is found: one per thread, whatever copy of weft asks. */
interface TaskContexts {
  /** The task of the asynchronous call in progress (see {@link runInTask}). */
  readonly storage: AsyncLocalStorage<TaskRuntime>;
  /** The task running synchronously right now (see {@link runInTaskSync}). */
  sync: TaskRuntime | null;
}

/**
 * Kept on `globalThis`, as the task registry and the scheduler's running code
 * are: a task module may import another copy of weft than the worker runs (the
 * build, beside the checkout's `weft worker` running the sources; a copy in
 * the module's own `node_modules`). With a context of its own per copy, such a
 * module's `secede()`, `rejoin()`, `getClient()` and `currentTaskKey()` threw
 * `… must be called from inside a running task` inside a running task.
 */
const CONTEXTS_KEY = Symbol.for("weft.taskContexts");
const contexts: TaskContexts = ((globalThis as Record<symbol, unknown>)[CONTEXTS_KEY] ??= {
  storage: new AsyncLocalStorage<TaskRuntime>(),
  sync: null,
}) as TaskContexts;

const NO_ARGS: readonly unknown[] = [];

/** Run `fn` as the task `runtime` describes (used by the executors). */
export function runInTask<T>(runtime: TaskRuntime, fn: () => T): T {
  return contexts.storage.run(runtime, fn);
}

/**
 * Run `fn(...args)`, a synchronous task function, as the task `runtime` describes:
 * the runtime is known for the duration of the call only, without entering
 * an `AsyncLocalStorage` (whose first use makes every promise of the
 * process slower in Node 20). For functions that are not `async`.
 */
export function runInTaskSync<T>(
  runtime: TaskRuntime,
  fn: (...args: never[]) => T,
  args: readonly unknown[] = NO_ARGS,
): T {
  const outer = contexts.sync;
  contexts.sync = runtime;
  try {
    return (fn as (...a: readonly unknown[]) => T)(...args);
  } finally {
    contexts.sync = outer;
  }
}

function runtime(what: string): TaskRuntime {
  const rt = contexts.sync ?? contexts.storage.getStore();
  if (rt === undefined) {
    // The likely mistake inside a task: a function that is not `async` calling it
    // after an await (in a .then callback), when the synchronous call is over.
    throw new Error(
      `${what} must be called from inside a running task (a task function that calls it after an await must be declared async)`,
    );
  }
  return rt;
}

/**
 * Whether a task's code is running here, now: inside its synchronous call, or
 * anywhere its async function's awaits lead.
 */
export function inRunningTask(): boolean {
  return (contexts.sync ?? contexts.storage.getStore()) !== undefined;
}

/** The key of the task whose code is running; throws outside a task. */
export function currentTaskKey(): string {
  return runtime("currentTaskKey()").key;
}

/**
 * Leave the worker's thread pool: the task keeps running, but no longer counts
 * against `nthreads`, so the worker may start another task (Dask's `secede`).
 * The scheduler is told the task is long-running. Calling it again before
 * {@link rejoin} does nothing.
 */
export function secede(): void {
  runtime("secede()").secede();
}

/**
 * After {@link secede}: wait until the pool has a free slot and take it (Dask's
 * `rejoin`). Resolves at once if the task did not secede.
 */
export function rejoin(): Promise<void> {
  return runtime("rejoin()").rejoin();
}

/**
 * The client of the running task's code, connected to the worker's scheduler
 * on its thread's first call and kept for the thread's later tasks: typed and
 * documented as `getClient()` (`client/taskClient.ts`), which the client's
 * module exports. Outside a task the error names `what`, the call the user
 * made (`workerClient()` asks for the client too).
 */
export function taskClient(what = "getClient()"): Promise<unknown> {
  return runtime(what).client();
}

/**
 * Have the running task's result wait for `sent` (see {@link TaskRuntime.track});
 * throws outside a task.
 */
export function trackTaskMessage(sent: Promise<unknown>): void {
  runtime("print()").track?.(sent);
}

/**
 * Throw this from a task to have the scheduler run it elsewhere (Dask's
 * `Reschedule`): the worker reports `reschedule` instead of an error.
 */
export class Reschedule extends Error {
  override name = "Reschedule";
  constructor(message = "task asked to be rescheduled") {
    super(message);
  }
}

/** Marks a {@link Reschedule} of any copy of weft (see {@link isReschedule}). */
const RESCHEDULE_MARK = Symbol.for("weft.Reschedule");
Object.defineProperty(Reschedule.prototype, RESCHEDULE_MARK, { value: true });

/**
 * Whether `err` is a {@link Reschedule}, that of another copy of weft included
 * (a task module importing the build beside a worker running the sources): by
 * `instanceof` alone, such a module's `Reschedule` was reported as the task's
 * error. False where looking throws (a Proxy whose traps throw).
 */
export function isReschedule(err: unknown): boolean {
  try {
    return (
      err instanceof Reschedule ||
      (typeof err === "object" &&
        err !== null &&
        (err as Record<symbol, unknown>)[RESCHEDULE_MARK] === true)
    );
  } catch {
    return false;
  }
}
