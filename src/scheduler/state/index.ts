/**
 * The scheduler's pure state machine: `SchedulerState` and what it takes and gives.
 */

// What it takes (inside its events) and what it gives: the messages between
// clients, workers and the scheduler, each union and each of its members.
export type {
  AcquireReplicasMsg,
  AddKeysMsg,
  CancelKeysMsg,
  CancelledKeysMsg,
  ClientDesiresKeysMsg,
  ClientRecipient,
  ClientReleasesKeysMsg,
  ClientTaskErredMsg,
  ClientToSchedulerMessage,
  ClientToSchedulerOp,
  CloseClientMsg,
  CloseWorkerMsg,
  ComputeTaskMsg,
  DatasetMsg,
  DatasetPublishedMsg,
  DatasetUnpublishedMsg,
  DataUpdatedMsg,
  FireAndForgetMsg,
  FreeKeysMsg,
  GetDatasetMsg,
  GraphTask,
  HeartbeatWorkerMsg,
  Key,
  KeyInMemoryMsg,
  LongRunningMsg,
  LostDataMsg,
  NBytes,
  PauseMsg,
  PublishDatasetMsg,
  RebalancedMsg,
  RebalanceMsg,
  RefreshWhoHasMsg,
  RegisterWorkerMsg,
  ReleaseWorkerDataMsg,
  RemoveReplicasMsg,
  RemoveWorkerMsg,
  ReplicatedMsg,
  ReplicateMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  RestartedMsg,
  RestartMsg,
  RestartWorkersMsg,
  RetireWorkersMsg,
  RetryMsg,
  ScatteredKey,
  SchedulerMessage,
  SchedulerToClientMessage,
  SchedulerToClientOp,
  SchedulerToWorkerMessage,
  SchedulerToWorkerOp,
  SpilledValues,
  StealRequestMsg,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
  TaskNoWorkerMsg,
  TaskRef,
  TaskRetriedMsg,
  TaskRunnableMsg,
  TaskSpec,
  UnpauseMsg,
  UnpublishDatasetMsg,
  UpdateDataMsg,
  UpdateGraphMsg,
  WhoHas,
  WorkerRecipient,
  WorkerStatusChangeMsg,
  WorkersRestartedMsg,
  WorkersRetiredMsg,
  WorkerToSchedulerMessage,
  WorkerToSchedulerOp,
} from "../../protocol/messages.ts";
// The containers its fields are (shared with the worker's state machine).
export { FlatRing, TimedFlatRing } from "../../util/flatRing.ts";
export { type HeapMarked, HeapSet } from "../../util/heapSet.ts";
export type { Priority } from "../../util/priority.ts";
export { adaptiveTarget } from "./adaptive.ts";
export {
  ClientInfo,
  DATASET_CLIENT_PREFIX,
  FIRE_AND_FORGET_CLIENT,
  isStandInClientId,
} from "./clientInfo.ts";
export type { Dataset } from "./datasets.ts";
export { Durations } from "./durations.ts";
export {
  InvalidStimulus,
  InvalidTaskState,
  InvalidTransition,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
export type {
  BalanceEvent,
  ClientMessageEvent,
  ReduceReplicasEvent,
  RemoveWorkerEvent,
  SchedulerEvent,
  SchedulerEventKind,
  StealRequestEvent,
  WorkerMessageEvent,
} from "./events.ts";
export { stimulusIdOf } from "./events.ts";
export type { ResolvedSchedulerStateOptions, SchedulerStateOptions } from "./options.ts";
export type { OpenFreeKeys } from "./outbox.ts";
export { noWorkerReason } from "./placement.ts";
export { Replication } from "./replicate.ts";
export { Retirement, workersToClose } from "./retire.ts";
export type {
  InFlightSteal,
  SchedulerTransitionPlugin,
  StimulusRecord,
} from "./schedulerState.ts";
export { SchedulerState } from "./schedulerState.ts";
export { WorkStealing } from "./stealTracking.ts";
export type { LoggedRecs, TransitionLogEntry } from "./story.ts";
export { formatLogEntry } from "./story.ts";
export { TaskGroup } from "./taskGroup.ts";
export type { SchedulerTaskStateName, WorkerRestrictions } from "./taskState.ts";
export { SCHEDULER_TASK_STATES, TaskState } from "./taskState.ts";
export { StimulusLog, TransitionLog } from "./transitionLog.ts";
export type {
  ErredArgs,
  MemoryArgs,
  TransitionArgs,
  TransitionFunction,
  TransitionTable,
} from "./transitions.ts";
export { ACTOR_LOST, SCATTERED_DATA_LOST, TRANSITIONS, transitionPairs } from "./transitions.ts";
export type { WorkerStatus } from "./workerInfo.ts";
export { WorkerInfo } from "./workerInfo.ts";
