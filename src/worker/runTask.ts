/**
 * Run one task function in the calling thread: look it up, call it inside the
 * task context (so `secede()`/`rejoin()` work), await it, and turn every ending
 * into an {@link ExecuteOutcome}. Shared by the inline executor and the pool threads.
 */

import { threadId } from "node:worker_threads";
import { type ActorHost, bindActorRefs } from "../client/actor.ts";
import { DATA_KINDS, valueProblem } from "../protocol/values.ts";
import {
  type ExecuteJob,
  type ExecuteOutcome,
  jobLabel,
  makeError,
  type SerializedError,
  serializeError,
  wallSeconds,
} from "./executor.ts";
import {
  isReschedule,
  runInTask,
  runInTaskSync,
  TASK_CONTEXT_MODULE,
  type TaskRuntime,
} from "./taskContext.ts";
import { frameLocations, withoutFrames, withoutRunnerFrames } from "./taskFrames.ts";
import { lookupTaskFunction } from "./taskRegistry.ts";

/** Where the frames that call task functions are: this module's and the task context's. */
const RUNNER_FRAMES = frameLocations([import.meta.url, TASK_CONTEXT_MODULE]);

/**
 * The error a task threw, its traceback and stack without the frames below
 * the task's own (this module's, the executor's, piscina's, Node's).
 */
function taskError(err: unknown): SerializedError {
  const e = serializeError(err);
  return {
    ...e,
    stack: withoutRunnerFrames(e.stack, RUNNER_FRAMES),
    tracebackText: withoutRunnerFrames(e.tracebackText, RUNNER_FRAMES),
  };
}

/** How the task's `secede()`, `rejoin()` and `getClient()` reach the worker. */
export interface SecedeHooks {
  secede(computeDuration: number): void;
  rejoin(): Promise<void>;
  client(): Promise<unknown>;
}

/** The running task's state, as `secede()` / `rejoin()` see it. */
class TaskRun implements TaskRuntime {
  secededAfter: number | null = null;
  private holdsSlot = true;

  constructor(
    readonly key: string,
    private readonly startedMs: number,
    private readonly hooks: SecedeHooks,
    /** The task makes an actor: its result is not checked (see {@link runTask}). */
    readonly actor = false,
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

  client(): Promise<unknown> {
    return this.hooks.client();
  }

  /** The messages the task sent without waiting (`print`), or null. */
  sent: Promise<unknown>[] | null = null;

  track(sent: Promise<unknown>): void {
    (this.sent ??= []).push(sent);
  }
}

/** How long a result waits for the task's messages to reach the scheduler, at most. */
const SENT_WAIT_MS = 5_000;

/** `outcome` once the messages of `run` have settled (or {@link SENT_WAIT_MS} has passed). */
async function afterSent(run: TaskRun, outcome: ExecuteOutcome): Promise<ExecuteOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SENT_WAIT_MS);
  });
  await Promise.race([Promise.allSettled(run.sent ?? []), waited]);
  clearTimeout(timer);
  return outcome;
}

const AsyncFunction = (async () => {}).constructor;

/** True for `async function`s and async arrows (not for functions that merely return promises). */
export function isAsyncFunction(fn: unknown): boolean {
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
 * Run `job.fn(...job.args)`. `finish` may post-process a returned value
 * (the pool threads serialise it); it runs inside the timing. With
 * `hasActors`, the `ActorRef`s among the arguments become handles calling
 * through the task's client. A returned value must be data (see
 * `protocol/values.ts`), whatever the executor: the task fails with a
 * `DataCloneError` naming what is not, rather than have a class instance keep
 * its prototype with one executor and lose it with another (or in a transfer).
 * `actor`: the task makes an actor, whose object is its result, not checked.
 */
export async function runTask(
  job: ExecuteJob,
  hooks: SecedeHooks,
  finish?: (value: unknown) => unknown,
): Promise<ExecuteOutcome> {
  return startTask(job, hooks, finish);
}

/**
 * {@link runTask}, without a promise when the function returns a plain value:
 * the outcome of a synchronous task is returned as it is, that of a task that
 * returned a promise (or an `async` function) as a promise. The inline
 * executor uses it so that a synchronous task costs no extra turns.
 */
export function startTask(
  job: ExecuteJob,
  hooks: SecedeHooks,
  finish?: (value: unknown) => unknown,
): ExecuteOutcome | Promise<ExecuteOutcome> {
  const start = wallSeconds();
  const run = new TaskRun(job.key, performance.now(), hooks, job.actor === true);
  let args = job.args;
  if (job.hasActors === true) {
    args = bindActorRefs(args, () => run.client() as Promise<ActorHost>) as unknown[];
  }
  const label = jobLabel(job);
  let fn: (...a: unknown[]) => unknown;
  try {
    fn = lookupTaskFunction(job.fn) as (...a: unknown[]) => unknown;
  } catch (err) {
    // No task ran: the frames are weft's own (the registry's, this module's, piscina's).
    const e = serializeError(err);
    const error = {
      ...e,
      stack: withoutFrames(e.stack),
      tracebackText: withoutFrames(e.tracebackText),
    };
    return errorOutcome(error, start, run);
  }
  let value: unknown;
  try {
    // Only async functions need the context to follow them across awaits.
    if (isAsyncFunction(fn)) {
      return settle(
        runInTask(run, () => fn(...args)),
        label,
        start,
        run,
        finish,
      );
    }
    value = runInTaskSync(run, fn, args);
    // Reading `then` may throw (a getter, a revoked Proxy): the task's error,
    // as a promise resolved with that value would reject with it.
    if (isThenable(value)) return settle(value, label, start, run, finish);
  } catch (err) {
    const thrown = thrownOutcome(err, start, run);
    return run.sent === null ? thrown : afterSent(run, thrown);
  }
  const outcome = valueOutcome(value, label, start, run, finish);
  return run.sent === null ? outcome : afterSent(run, outcome);
}

async function settle(
  pending: unknown,
  label: string,
  start: number,
  run: TaskRun,
  finish: ((value: unknown) => unknown) | undefined,
): Promise<ExecuteOutcome> {
  let value: unknown;
  let outcome: ExecuteOutcome;
  try {
    value = await pending;
  } catch (err) {
    outcome = thrownOutcome(err, start, run);
    return run.sent === null ? outcome : afterSent(run, outcome);
  }
  outcome = valueOutcome(value, label, start, run, finish);
  return run.sent === null ? outcome : afterSent(run, outcome);
}

function thrownOutcome(err: unknown, start: number, run: TaskRun): ExecuteOutcome {
  if (isReschedule(err)) {
    return {
      status: "reschedule",
      start,
      stop: wallSeconds(),
      threadId,
      secededAfter: run.secededAfter,
    };
  }
  return errorOutcome(taskError(err), start, run);
}

function errorOutcome(error: SerializedError, start: number, run: TaskRun): ExecuteOutcome {
  return {
    status: "error",
    error,
    start,
    stop: wallSeconds(),
    threadId,
    secededAfter: run.secededAfter,
  };
}

function valueOutcome(
  value: unknown,
  label: string,
  start: number,
  run: TaskRun,
  finish: ((value: unknown) => unknown) | undefined,
): ExecuteOutcome {
  if (!run.actor) {
    const problem = valueProblem(value, "result");
    if (problem !== null) {
      return errorOutcome(
        makeError(
          "DataCloneError",
          `result of ${label} cannot be cloned: ${problem}; task results must be data (${DATA_KINDS})`,
        ),
        start,
        run,
      );
    }
  }
  if (finish !== undefined) {
    try {
      value = finish(value);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return errorOutcome(
        makeError("DataCloneError", `result of ${label} cannot be cloned: ${why}`),
        start,
        run,
      );
    }
  }
  return {
    status: "ok",
    value,
    start,
    stop: wallSeconds(),
    threadId,
    secededAfter: run.secededAfter,
  };
}
