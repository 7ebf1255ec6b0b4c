/**
 * What a worker shell does with messages: a scheduler→worker message becomes
 * the worker state machine's event (as Dask's `Worker` stream handlers do),
 * and a worker's `SendMessageToScheduler` instruction becomes the message the
 * scheduler state machine takes.
 */

import type {
  SchedulerToWorkerMessage,
  WorkerToSchedulerMessage,
} from "../protocol/messagesWorker.ts";
import {
  AcquireReplicasEvent,
  ComputeTaskEvent,
  FreeKeysEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  type StateMachineEvent,
  StealRequestEvent,
  UnpauseEvent,
} from "../worker/state/events.ts";
import { type SendMessageToScheduler, toMessage } from "../worker/state/instructions.ts";

/** The worker state machine event for a message from the scheduler. */
export function eventForMessage(msg: SchedulerToWorkerMessage): StateMachineEvent {
  switch (msg.op) {
    case "compute-task":
      return new ComputeTaskEvent({
        key: msg.key,
        runId: msg.runId,
        whoHas: msg.whoHas,
        nbytes: msg.nbytes,
        priority: msg.priority,
        duration: msg.duration,
        runSpec: msg.runSpec,
        resourceRestrictions: msg.resourceRestrictions,
        actor: msg.actor,
        annotations: { ...msg.annotations },
        spanId: msg.spanId,
        stimulusId: msg.stimulusId,
      });
    case "free-keys":
      return new FreeKeysEvent({ keys: msg.keys, stimulusId: msg.stimulusId });
    case "acquire-replicas":
      return new AcquireReplicasEvent({
        whoHas: msg.whoHas,
        nbytes: msg.nbytes,
        stimulusId: msg.stimulusId,
      });
    case "remove-replicas":
      return new RemoveReplicasEvent({ keys: msg.keys, stimulusId: msg.stimulusId });
    case "refresh-who-has":
      return new RefreshWhoHasEvent({ whoHas: msg.whoHas, stimulusId: msg.stimulusId });
    case "steal-request":
      return new StealRequestEvent({ key: msg.key, stimulusId: msg.stimulusId });
    case "remove-worker":
      return new RemoveWorkerEvent({ worker: msg.worker, stimulusId: msg.stimulusId });
    case "pause":
      return new PauseEvent({ stimulusId: msg.stimulusId });
    case "unpause":
      return new UnpauseEvent({ stimulusId: msg.stimulusId });
  }
}

/** The scheduler message a worker instruction stands for (its wire form, as `toMessage` gives it). */
export function messageForInstruction(inst: SendMessageToScheduler): WorkerToSchedulerMessage {
  return toMessage(inst) as unknown as WorkerToSchedulerMessage;
}
