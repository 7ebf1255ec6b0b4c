/**
 * Running task functions for the worker: the `Execute` instruction (a task of
 * the graph, on the executor, holding one of the worker's slots; an actor
 * task, with a pool, on the main thread) and a client's `run` (a function
 * outside any graph, run as a task is). Turns how a run ended into the state
 * machine's event: `ExecuteSuccessEvent`, `ExecuteFailureEvent` (the task's
 * error, or the worker's around it) or `RescheduleEvent`, and a secession into
 * a `SecedeEvent`. A task whose input was spilled and is gone from disk is
 * rescheduled (see lostSpills.ts): its code did nothing wrong.
 *
 * Apart from the worker because it is the one part that deals with slots,
 * executors and outcomes; the worker only hands it instructions.
 */

import type { Logger } from "pino";
import { ClonedValue } from "../comm/clonedValue.ts";
import { type TaskSpec, taskSpecProblem } from "../protocol/messagesTaskSpec.ts";
import { sizeof, typeName } from "../util/sizeof.ts";
import { newStimulusId as stimulusId } from "../util/stimulusId.ts";
import { wallSeconds } from "../util/wallClock.ts";
import type { AsyncInstructionContext } from "./baseWorker.ts";
import { asWireValue } from "./dataServer.ts";
import { Execution } from "./execution.ts";
import {
  type ExecuteJob,
  type ExecuteOutcome,
  type Executor,
  wireError,
  wireErrorMessage,
} from "./executor.ts";
import { MissingDependencyError, resolveArgs } from "./resolveArgs.ts";
import { SlotGate } from "./slotGate.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import {
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  RescheduleEvent,
  SecedeEvent,
  type StateMachineEvent,
} from "./state/events.ts";
import type { WorkerState } from "./state/workerState.ts";
import type { TaskExecutors } from "./taskExecutors.ts";
import type { WorkerStatus } from "./worker.ts";

/** What the task runner needs of its worker. */
export interface TaskRunnerHost {
  readonly state: WorkerState;
  readonly logger: Logger;
  readonly executors: TaskExecutors;
  /** Feed the state machine (a task's `SecedeEvent`). */
  handleStimulus(...stims: StateMachineEvent[]): void;
  /** The client of task code on the main thread (`getClient()`). */
  readonly taskClient: () => Promise<unknown>;
  /** A run that asked for a client ended: the futures its code let go of may be collected. */
  clientRunEnded?(): void;
  /** Where the worker is in its life: `run` is refused once it is closing. */
  status(): WorkerStatus;
  /**
   * The task `key` found its input lost from disk (`err`): null to reschedule
   * it at once, what to wait for first, or `"fail"` to err it with `err` (see
   * `LostSpills.verdict`).
   */
  spilledInputLost(err: SpilledValueLostError, key: string): Promise<void> | null | "fail";
}

/** Dask's threshold for recording the time a task's inputs took to read (`disk-read`). */
const DISK_READ_RECORDED_S = 0.005;

/** Runs the worker's tasks and `run` calls, at most one per slot of the worker's threads. */
export class TaskRunner {
  /** The worker's threads: a task (or a `run`) holds one while it computes. */
  private readonly gate: SlotGate;
  /** `run` calls answered so far (names their runs). */
  private runCount = 0;
  /** Aborted by {@link close}: a `run` waiting for a thread, or running, stops. */
  private readonly closing = new AbortController();
  /** The runs of tasks not over yet, by key (for {@link holdsClient}). */
  private readonly runs = new Map<string, Execution>();

  constructor(
    private readonly host: TaskRunnerHost,
    nthreads: number,
  ) {
    this.gate = new SlotGate(nthreads);
  }

  /**
   * Carry out an `Execute` instruction: run the task on its executor once a
   * slot is free (an actor task, with a pool, on the main thread): the event
   * saying how it ended, at once if it ended at once.
   */
  execute(
    key: string,
    stimId: string,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent | Promise<StateMachineEvent> {
    const ts = this.host.state.tasks.get(key);
    if (ts === undefined) throw new Error(`Execute(${key}): no such task`);
    const runId = ts.runId;
    const executor = this.host.executors.main;
    if (executor === null) throw new Error("Execute before start()");
    try {
      const spec = ts.runSpec?.task ?? null;
      const problem = taskSpecProblem(spec);
      if (problem !== null) throw new TypeError(`task ${key} has an invalid run spec: ${problem}`);
      const { fn, args } = spec as TaskSpec;
      // Reading the inputs may read spilled ones from disk: a read that took a
      // while is recorded for the task stream, as Dask's worker records it.
      const readStart = wallSeconds();
      const resolved = resolveArgs(args, this.host.state.data, key, this.host.state);
      const readStop = wallSeconds();
      if (readStop - readStart > DISK_READ_RECORDED_S) {
        ts.addStartStop({ action: "disk-read", start: readStart, stop: readStop });
      }
      const actor = this.host.state.actors.has(key);
      const job: ExecuteJob = {
        key,
        fn,
        args: resolved.args,
        hasActors: resolved.hasActors,
        actor,
      };
      if (actor && executor.kind !== "inline") {
        const onMainThread = this.runActorTask(job, runId, ctx);
        return this.withFailureEvent(onMainThread, key, runId, stimId, ctx);
      }
      if (this.gate.tryAcquire()) {
        const ended = this.runHoldingSlot(job, runId, ctx, executor);
        return ended instanceof Promise
          ? this.withFailureEvent(ended, key, runId, stimId, ctx)
          : ended;
      }
      const later = this.runWhenSlotFree(job, runId, ctx, executor);
      return this.withFailureEvent(later, key, runId, stimId, ctx);
    } catch (err) {
      if (err instanceof SpilledValueLostError) return this.inputLost(err, key, runId, ctx);
      return this.unknownError(err, key, runId, stimId, ctx);
    }
  }

  /**
   * `key` cannot run here: its input `err.key` was spilled and is gone. It is
   * rescheduled (Dask's `Reschedule`), for the scheduler to run it again once
   * the input is computed again or fetched from another holder; erring it would
   * blame its code for the disk. After a wait while another task here still
   * needs the input (see `LOST_INPUT_RETRY_MS`); erred with `err` instead, as
   * Dask errs every reader, once the tasks holding it may be waiting for this
   * one (see `LOST_INPUT_HELD_MS`).
   */
  private inputLost(
    err: SpilledValueLostError,
    key: string,
    runId: number,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent | Promise<StateMachineEvent> {
    const waited = this.host.spilledInputLost(err, key);
    if (waited === "fail") {
      return ExecuteFailureEvent.fromException(
        err,
        { key, runId, stimulusId: stimulusId("spilled-input-lost") },
        wireErrorMessage,
      );
    }
    const event = () => new RescheduleEvent({ key, stimulusId: stimulusId("spilled-input-lost") });
    if (waited === null) return event();
    // Aborted by the worker's close: the rejection ends the instruction quietly.
    const { signal } = ctx;
    return new Promise<StateMachineEvent>((resolve, reject) => {
      const aborted = () => reject(signal.reason);
      if (signal.aborted) return aborted();
      signal.addEventListener("abort", aborted, { once: true });
      void waited.then(() => {
        signal.removeEventListener("abort", aborted);
        resolve(event());
      });
    });
  }

  /**
   * Whether the task `key` runs here and asked for a client in this run: it may
   * be waiting for other tasks (see `LostSpills`).
   */
  holdsClient(key: string): boolean {
    return this.runs.get(key)?.holdsClient === true;
  }

  private async runWhenSlotFree(
    job: ExecuteJob,
    runId: number,
    ctx: AsyncInstructionContext,
    executor: Executor,
  ): Promise<StateMachineEvent> {
    await this.gate.acquire(ctx.signal);
    return this.runHoldingSlot(job, runId, ctx, executor);
  }

  /** An actor task, with a pool: on the main thread, holding a slot as any task. */
  private async runActorTask(
    job: ExecuteJob,
    runId: number,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    const executor = await this.host.executors.actor();
    return this.runWhenSlotFree(job, runId, ctx, executor);
  }

  /**
   * Run `job` on the executor, a slot of the gate being held; the event at once
   * when the task ended at once (a synchronous task on the inline executor).
   */
  private runHoldingSlot(
    job: ExecuteJob,
    runId: number,
    ctx: AsyncInstructionContext,
    executor: Executor,
  ): StateMachineEvent | Promise<StateMachineEvent> {
    const key = job.key;
    const execution = new Execution(
      this.gate,
      (computeDuration) => {
        this.host.handleStimulus(
          new SecedeEvent({ key, computeDuration, stimulusId: stimulusId("secede") }),
        );
      },
      ctx.signal,
      this.host.taskClient,
    );
    this.runs.set(key, execution);
    let outcome: ExecuteOutcome | Promise<ExecuteOutcome>;
    try {
      outcome = executor.run(job, execution, ctx.signal);
    } catch (err) {
      this.finish(key, execution, null);
      throw err;
    }
    if (outcome instanceof Promise) return this.awaitOutcome(outcome, execution, key, runId, ctx);
    return this.ended(outcome, execution, key, runId, ctx);
  }

  private async awaitOutcome(
    pending: Promise<ExecuteOutcome>,
    execution: Execution,
    key: string,
    runId: number,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    let outcome: ExecuteOutcome;
    try {
      outcome = await pending;
    } catch (err) {
      this.finish(key, execution, null);
      throw err;
    }
    return this.ended(outcome, execution, key, runId, ctx);
  }

  /** The run of `key` is over: as `Execution.finish`, and no longer listed. */
  private finish(key: string, execution: Execution, secededAfter: number | null): void {
    execution.finish(secededAfter);
    if (this.runs.get(key) === execution) this.runs.delete(key);
    if (execution.askedClient) this.host.clientRunEnded?.();
  }

  private ended(
    outcome: ExecuteOutcome,
    execution: Execution,
    key: string,
    runId: number,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent {
    this.finish(key, execution, outcome.secededAfter);
    ctx.ledger.record("thread", outcome.stop - outcome.start);
    return this.outcomeEvent(key, runId, outcome);
  }

  /** `pending`, with a failure around the task turned into an ExecuteFailureEvent. */
  private async withFailureEvent(
    pending: Promise<StateMachineEvent>,
    key: string,
    runId: number,
    stimId: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    try {
      return await pending;
    } catch (err) {
      return this.unknownError(err, key, runId, stimId, ctx);
    }
  }

  /** A failure of the worker around the task (not the task's own error). Rethrows an abort. */
  private unknownError(
    err: unknown,
    key: string,
    runId: number,
    stimId: string,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent {
    if (ctx.signal.aborted) throw err;
    if (
      err instanceof MissingDependencyError &&
      this.host.state.tasks.get(key)?.state === "cancelled"
    ) {
      // Cancelled, and a dependency freed, by the same batch of messages that started
      // it (a client's cancel or release): expected, and the failure only releases it.
      this.host.logger.debug({ err, key, stimulusId: stimId }, "cancelled task not run");
    } else {
      this.host.logger.error({ err, key, stimulusId: stimId }, "could not run task");
    }
    return ExecuteFailureEvent.fromException(
      err,
      { key, runId, stimulusId: stimulusId("execute-unknown-error") },
      wireErrorMessage,
    );
  }

  private outcomeEvent(key: string, runId: number, outcome: ExecuteOutcome): StateMachineEvent {
    if (this.host.state.tasks.has(key)) this.host.state.threads.set(key, outcome.threadId);
    switch (outcome.status) {
      case "ok":
        return new ExecuteSuccessEvent({
          key,
          runId,
          value: outcome.value,
          start: outcome.start,
          stop: outcome.stop,
          nbytes: sizeof(outcome.value),
          type: typeName(outcome.value),
          stimulusId: stimulusId("task-finished"),
        });
      case "error": {
        const e = wireError(outcome.error);
        return new ExecuteFailureEvent({
          key,
          runId,
          start: outcome.start,
          stop: outcome.stop,
          exception: e.exception,
          traceback: e.traceback,
          exceptionText: e.exceptionText,
          tracebackText: e.tracebackText,
          stimulusId: stimulusId("task-erred"),
        });
      }
      case "reschedule":
        return new RescheduleEvent({ key, stimulusId: stimulusId("reschedule") });
    }
  }

  /**
   * The worker closes: the `run` calls waiting for a thread or running end (their
   * requesters' connections are cut anyway), rather than waiting for good.
   */
  close(): void {
    this.closing.abort(new Error("run: the worker closed"));
  }

  /**
   * Answers a client's `run` (Dask's `Client.run`): the task function `fn` on
   * `args`, outside any graph, run by the executor as a task is and holding
   * one of the worker's threads meanwhile. `{status: "OK", value}`, or
   * `{status: "error", error}` with the error it threw, as a task's. An
   * answer larger than the requester's `maxMessageBytes` (said in the request)
   * is not sent (`serveRpc`): it gets an error answer with the `MessageTooLargeError`.
   */
  readonly runFunction = async (args: Record<string, unknown>): Promise<unknown> => {
    const fn = args.fn;
    const given = args.args;
    if (typeof fn !== "string" || !Array.isArray(given)) {
      throw new TypeError("run: expected {fn: a task function's name, args: an array}");
    }
    const executor = this.host.executors.main;
    const status = this.host.status();
    if (executor === null || status === "closing" || status === "closed") {
      throw new Error(`run: the worker is ${status}`);
    }
    const signal = this.closing.signal;
    await this.gate.acquire(signal);
    // A run that secedes gives its slot back, as a task does; nobody else is told.
    const execution = new Execution(this.gate, () => {}, signal, this.host.taskClient);
    const job: ExecuteJob = {
      key: `run-${fn}-${++this.runCount}`,
      fn,
      args: given.map((a) => ClonedValue.unwrap(a)),
      label: `client.run(${fn})`,
    };
    let outcome: ExecuteOutcome;
    try {
      outcome = await executor.run(job, execution, signal);
    } catch (err) {
      execution.finish(null);
      throw err;
    }
    execution.finish(outcome.secededAfter);
    if (outcome.status === "ok") return { status: "OK", value: asWireValue(outcome.value) };
    if (outcome.status === "error") return { status: "error", error: outcome.error };
    throw new Error(`run: ${fn} raised Reschedule, which only a task may`);
  };
}
