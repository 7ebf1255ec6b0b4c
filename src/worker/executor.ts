/**
 * How a worker runs task functions: an {@link Executor} takes a job (function
 * name, resolved arguments) and returns its outcome. Two exist: inline (on the
 * main thread) and piscina (a pool of worker threads).
 */

import { readSafely } from "../util/readSafely.ts";
import {
  type ErrorMessage,
  errorMessage,
  stackHeader,
  truncateErrorText,
} from "./state/errorMessage.ts";
import { withoutFrames } from "./taskFrames.ts";

/** One task to run. */
export interface ExecuteJob {
  /** The task's key. */
  readonly key: string;
  /** The registered function's name. */
  readonly fn: string;
  /** The arguments, task references already replaced by values. */
  readonly args: readonly unknown[];
  /**
   * Some of the arguments are `ActorRef`s: the thread running the task makes
   * each a handle calling through the task's client. Default false.
   */
  readonly hasActors?: boolean;
  /**
   * The task makes an actor: its result is the object itself, which stays on
   * this worker, and need not be data as other results must be. Default false.
   */
  readonly actor?: boolean;
  /**
   * How errors name the job: `task <key>` unless set. `Client.run`'s runs set
   * it, since they are not tasks and their keys are made up.
   */
  readonly label?: string;
}

/** How errors name `job`: its `label`, or `task <key>`. */
export function jobLabel(job: { readonly key: string; readonly label?: string }): string {
  return job.label ?? `task ${job.key}`;
}

/** What the worker does when the running task calls `secede()` / `rejoin()`. */
export interface RunControl {
  /** The task seceded after running `computeDuration` seconds. */
  secede(computeDuration: number): void;
  /** The task wants a slot again; resolves once it has one. */
  rejoin(): Promise<void>;
  /** The client of the task's code (`getClient()`), on the thread the task runs on. */
  client(): Promise<unknown>;
  /**
   * The task's code got a client of its own thread's instead (a pool thread's):
   * like a call of {@link client}, it tells the worker the task may be waiting
   * for other tasks, which it weighs when a value they share is lost from disk.
   */
  usesClient?(): void;
}

/** An error as it crosses threads and the wire: plain strings only. */
export interface SerializedError {
  /** The error's class name (`TypeError`, …). */
  readonly name: string;
  /** Its message. */
  readonly message: string;
  /** Its stack, as text ("" when it had none). */
  readonly stack: string;
  /** `"Name: message"`, or the texts a `TaskError` carried. */
  readonly exceptionText: string;
  /** The stack without its first line. */
  readonly tracebackText: string;
}

/** When and where a task ran. */
export interface RunTiming {
  /** Wall-clock seconds at start and stop. */
  readonly start: number;
  /** When it stopped, in wall-clock seconds. */
  readonly stop: number;
  /** The thread it ran on (`worker_threads.threadId`; 0 is the main thread). */
  readonly threadId: number;
  /** Seconds it had run when it seceded, or null if it did not. */
  readonly secededAfter: number | null;
}

/** How a task ended. */
export type ExecuteOutcome =
  | ({ readonly status: "ok"; readonly value: unknown } & RunTiming)
  | ({ readonly status: "error"; readonly error: SerializedError } & RunTiming)
  | ({ readonly status: "reschedule" } & RunTiming);

/** Runs task functions. */
export interface Executor {
  /** `"inline"` or `"piscina"`. */
  readonly kind: string;
  /** The task functions defined once the task modules were loaded (on a pool thread, for a pool). */
  readonly taskNames: readonly string[];
  /**
   * Run a job. Never rejects for the task's own failures (those are `error`
   * outcomes); rejects if aborted through `signal` or if the executor broke.
   * May run the task at once and return its outcome itself (the inline
   * executor, for a task that returns a plain value): call it outside the
   * worker state machine's stimulus handling.
   */
  run(
    job: ExecuteJob,
    control: RunControl,
    signal: AbortSignal,
  ): ExecuteOutcome | Promise<ExecuteOutcome>;
  /**
   * Import more task modules (file URLs), for every task from now on (Dask's
   * `upload_file`, for modules already on this machine): resolves with the
   * task functions then defined; rejects if a module fails to import, which
   * is then not imported anywhere else. Modules imported already are skipped.
   */
  loadModules(urls: readonly string[]): Promise<readonly string[]>;
  /**
   * Have the threads that run tasks collect their garbage, if they are not
   * the main thread (whose collection the worker runs itself).
   */
  collectGarbage?(): void;
  /**
   * The scheduler removed the worker at `address` (gone silent, perhaps frozen):
   * cut the connections tasks' clients on the pool threads have to it, whose
   * calls (an actor's method) a frozen worker would never answer.
   */
  peerLeft?(address: string, reason: string): void;
  /** The ids of the threads that run tasks, if not the main thread (for the profiler). */
  threadIds?(): readonly number[];
  /** Stop; running tasks are abandoned. */
  close(): Promise<void>;
}

/** Wall-clock time in seconds, sub-millisecond, comparable across threads. */
export function wallSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/**
 * The plain form of a thrown value. Never throws: a field whose getter throws
 * is reported as unreadable (the task's error must reach the scheduler, not
 * take down the pool thread reporting it).
 */
export function serializeError(err: unknown): SerializedError {
  const msg = readSafely(
    () => errorMessage(err),
    (why) => ({
      exceptionText: `Error: the task threw a value whose fields cannot be read (${why})`,
      tracebackText: "",
    }),
  );
  const isError = readSafely(
    () => err instanceof Error,
    () => false,
  );
  if (isError) {
    const e = err as Error;
    const name = readSafely(
      () => String(e.name),
      () => "Error",
    );
    const message = readSafely(
      () => String(e.message),
      (why) => `<unreadable message: ${why}>`,
    );
    const stack = readSafely(
      () => String(e.stack ?? ""),
      () => "",
    );
    return {
      name: truncateErrorText(name),
      message: truncateErrorText(message),
      stack: cutStack(stack, name, message),
      exceptionText: msg.exceptionText,
      tracebackText: msg.tracebackText,
    };
  }
  return {
    name: "Error",
    message: msg.exceptionText,
    stack: "",
    exceptionText: msg.exceptionText,
    tracebackText: msg.tracebackText,
  };
}

/**
 * `stack` with its header's message and its frames each cut to
 * `MAX_ERROR_LENGTH`, as `serializeError` cuts the message (the header repeats it).
 */
function cutStack(stack: string, name: string, message: string): string {
  const header = stackHeader(name, message);
  const cutHeader = stackHeader(truncateErrorText(name), truncateErrorText(message));
  if (stack === header) return cutHeader;
  // A stack whose header is not the error's (name or message changed after it was made).
  if (!stack.startsWith(`${header}\n`)) return truncateErrorText(stack);
  return `${cutHeader}\n${truncateErrorText(stack.slice(header.length + 1))}`;
}

/** The opaque `exception`/`traceback` the scheduler gets: plain, serialisable fields. */
export function wireError(e: SerializedError): ErrorMessage {
  return {
    status: "error",
    exception: { name: e.name, message: e.message, stack: e.stack },
    traceback: e.stack,
    exceptionText: e.exceptionText,
    tracebackText: e.tracebackText,
  };
}

/** A thrown value as the scheduler gets it (a task's error, a failure around it). */
export function wireErrorMessage(err: unknown): ErrorMessage {
  return wireError(serializeError(err));
}

/** A {@link SerializedError} for a failure of the worker around the task (cloning, a bad spec, …). */
export function makeError(name: string, message: string): SerializedError {
  const err = new Error(message);
  err.name = name;
  // Made here, its frames are weft's own (this, runTask, the pool thread, piscina), none
  // the task's: a traceback of them said nothing of the task (Dask's shows its frames only).
  const e = serializeError(err);
  return { ...e, stack: withoutFrames(e.stack), tracebackText: withoutFrames(e.tracebackText) };
}
