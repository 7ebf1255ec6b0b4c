/**
 * The scheduler's pure state machine: `SchedulerState` and what it takes and gives.
 */

// What it takes (inside its events) and what it gives: the messages between
// clients, workers and the scheduler.
export type {
  ClientRecipient,
  ClientToSchedulerMessage,
  ClientToSchedulerOp,
  GraphTask,
  Key,
  SchedulerMessage,
  SchedulerToClientMessage,
  SchedulerToClientOp,
  SchedulerToWorkerMessage,
  SchedulerToWorkerOp,
  TaskRef,
  TaskSpec,
  WorkerRecipient,
  WorkerToSchedulerMessage,
  WorkerToSchedulerOp,
} from "../../protocol/messages.ts";
export { ClientInfo } from "./clientInfo.ts";
export {
  InvalidStimulus,
  InvalidTaskState,
  InvalidTransition,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
export type {
  ClientMessageEvent,
  RemoveWorkerEvent,
  SchedulerEvent,
  SchedulerEventKind,
  StealRequestEvent,
  WorkerMessageEvent,
} from "./events.ts";
export { stimulusIdOf } from "./events.ts";
export type { ResolvedSchedulerStateOptions, SchedulerStateOptions } from "./options.ts";
export { noWorkerReason } from "./placement.ts";
export type { InFlightSteal, StimulusRecord } from "./schedulerState.ts";
export { SchedulerState } from "./schedulerState.ts";
export type { LoggedRecs, TransitionLogEntry } from "./story.ts";
export { formatLogEntry } from "./story.ts";
export type { SchedulerTaskStateName } from "./taskState.ts";
export { SCHEDULER_TASK_STATES, TaskState } from "./taskState.ts";
export type { ErredArgs, MemoryArgs, TransitionArgs } from "./transitions.ts";
export { TRANSITIONS, transitionPairs } from "./transitions.ts";
export type { WorkerStatus } from "./workerInfo.ts";
export { WorkerInfo } from "./workerInfo.ts";
