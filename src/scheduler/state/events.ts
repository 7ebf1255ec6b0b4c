/**
 * The stimuli of the scheduler state machine. Messages from workers and
 * clients arrive wrapped with their origin; the shell adds the stimuli it
 * detects itself (a worker's connection dropped, a steal it decided on).
 */

import type { ClientToSchedulerMessage } from "../../protocol/messagesClient.ts";
import type { WorkerToSchedulerMessage } from "../../protocol/messagesWorker.ts";
import { showValue } from "../../util/showValue.ts";

/** A message from the worker at `worker` (for `register-worker`, the address it registers). */
export interface WorkerMessageEvent {
  /** Tags the stimulus as a worker's message. */
  readonly kind: "worker-message";
  /** The address of the worker it came from. */
  readonly worker: string;
  /** The message, as the worker sent it. */
  readonly msg: WorkerToSchedulerMessage;
}

/** A message from a client; the client is named in `msg.clientId`. */
export interface ClientMessageEvent {
  /** Tags the stimulus as a client's message. */
  readonly kind: "client-message";
  /** The message, as the client sent it. */
  readonly msg: ClientToSchedulerMessage;
}

/**
 * A worker left: its connection closed, it missed heartbeats, or it retired.
 * `expected` (a graceful retirement) does not count against the tasks it was
 * running (Dask's `suspicious` count and `allowed-failures`).
 */
export interface RemoveWorkerEvent {
  /** Tags the stimulus as a worker's removal. */
  readonly kind: "remove-worker";
  /** The address of the worker that left. */
  readonly worker: string;
  /** It left gracefully (retired): its running tasks are not suspected. Default false. */
  readonly expected?: boolean;
  /** The ID of this stimulus, which every transition it causes is logged with. */
  readonly stimulusId: string;
}

/**
 * Try to move `key`, processing on `victim` but not yet running there, to
 * `thief` (or, without one, to the best other worker). The scheduler sends
 * `steal-request` to the victim and moves the task when the victim's
 * `steal-response` says it had not started (Dask's work stealing).
 */
export interface StealRequestEvent {
  /** Tags the stimulus as a steal the shell decided on. */
  readonly kind: "steal-request";
  /** The task to move. */
  readonly key: string;
  /** The address of the worker it is processing on. */
  readonly victim: string;
  /** The address of the worker to move it to. Default: the best other worker. */
  readonly thief?: string;
  /** The ID of this stimulus, which every transition it causes is logged with. */
  readonly stimulusId: string;
}

/**
 * One round of work stealing (Dask's `WorkStealing.balance`, which Dask runs
 * every 100 ms): move queued tasks from saturated workers to idle ones by
 * sending `steal-request`s to the victims (see `workStealing.ts`). Cheap when
 * no worker is idle or every worker is.
 */
export interface BalanceEvent {
  /** Tags the stimulus as a round of work stealing. */
  readonly kind: "balance";
  /** The ID of this stimulus, which every steal it requests carries. */
  readonly stimulusId: string;
}

/**
 * One round of the Active Memory Manager's ReduceReplicas policy (Dask runs
 * one every 2 s): ask workers to drop the replicas of in-memory keys beyond
 * those needed (see `activeMemoryManager.ts`).
 */
export interface ReduceReplicasEvent {
  /** Tags the stimulus as a round of the Active Memory Manager. */
  readonly kind: "reduce-replicas";
  /** The ID of this stimulus, which every `remove-replicas` it sends carries. */
  readonly stimulusId: string;
}

/** Every stimulus `SchedulerState.handleStimulus` accepts. */
export type SchedulerEvent =
  | WorkerMessageEvent
  | ClientMessageEvent
  | RemoveWorkerEvent
  | StealRequestEvent
  | BalanceEvent
  | ReduceReplicasEvent;

/** The `kind` of every stimulus. */
export type SchedulerEventKind = SchedulerEvent["kind"];

/**
 * Compile-time exhaustiveness for `switch`es over event kinds and message ops:
 * a case left out makes the call site fail to type-check.
 */
export function unreachable(value: never, what: string): never {
  throw new TypeError(`unexpected ${what}: ${showValue(value)}`);
}

/** The stimulus id an event carries (in its message, for wrapped messages). */
export function stimulusIdOf(ev: SchedulerEvent): string {
  switch (ev.kind) {
    case "worker-message":
    case "client-message":
      return ev.msg.stimulusId;
    case "remove-worker":
    case "steal-request":
    case "balance":
    case "reduce-replicas":
      return ev.stimulusId;
  }
}
