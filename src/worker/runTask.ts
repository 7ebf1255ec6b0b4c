/**
 * Run one task function in the calling thread: look it up, call it inside the
 * task context (so `secede()`/`rejoin()` work), await it, and turn every ending
 * into an {@link ExecuteOutcome}. Shared by the inline executor and the pool threads.
 */

import { threadId } from "node:worker_threads";
import {
  type ExecuteOutcome,
  makeError,
  type RunTiming,
  serializeError,
  wallSeconds,
} from "./executor.ts";
import { Reschedule, runInTask, runInTaskSync, type TaskRuntime } from "./taskContext.ts";
import { lookupTaskFunction } from "./taskRegistry.ts";

/** How the task's `secede()` / `rejoin()` reach the worker. */
export interface SecedeHooks {
  secede(computeDuration: number): void;
  rejoin(): Promise<void>;
}

/** The running task's state, as `secede()` / `rejoin()` see it. */
class TaskRun implements TaskRuntime {
  secededAfter: number | null = null;
  private holdsSlot = true;

  constructor(
    readonly key: string,
    private readonly startedMs: number,
    private readonly hooks: SecedeHooks,
  ) {}

  secede(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    const after = (performance.now() - this.startedMs) / 1000;
    if (this.secededAfter === null) this.secededAfter = after;
    this.hooks.secede(after);
  }

  async rejoin(): Promise<void> {
    if (this.holdsSlot) return;
    await this.hooks.rejoin();
    this.holdsSlot = true;
  }
}

const AsyncFunction = (async () => {}).constructor;

/** True for `async function`s and async arrows (not for functions that merely return promises). */
function isAsyncFunction(fn: unknown): boolean {
  return fn instanceof AsyncFunction;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === "object" || typeof v === "function") &&
    v !== null &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

/**
 * Run `fn(...args)` for task `key`. `finish` may post-process a returned value
 * (the pool threads serialise it); it runs inside the timing.
 */
export async function runTask(
  key: string,
  fnName: string,
  args: readonly unknown[],
  hooks: SecedeHooks,
  finish: (value: unknown) => unknown = (v) => v,
): Promise<ExecuteOutcome> {
  const start = wallSeconds();
  const run = new TaskRun(key, performance.now(), hooks);
  const timing = (): RunTiming => ({
    start,
    stop: wallSeconds(),
    threadId,
    secededAfter: run.secededAfter,
  });
  let fn: (...a: unknown[]) => unknown;
  try {
    fn = lookupTaskFunction(fnName) as (...a: unknown[]) => unknown;
  } catch (err) {
    return { status: "error", error: serializeError(err), ...timing() };
  }
  let value: unknown;
  try {
    // Only async functions need the context to follow them across awaits.
    value = isAsyncFunction(fn)
      ? runInTask(run, () => fn(...args))
      : runInTaskSync(run, () => fn(...args));
    if (isThenable(value)) value = await value;
  } catch (err) {
    if (err instanceof Reschedule) return { status: "reschedule", ...timing() };
    return { status: "error", error: serializeError(err), ...timing() };
  }
  try {
    value = finish(value);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      status: "error",
      error: makeError("DataCloneError", `result of task ${key} cannot be cloned: ${why}`),
      ...timing(),
    };
  }
  return { status: "ok", value, ...timing() };
}
