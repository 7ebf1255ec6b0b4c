/**
 * The messages between clients, the scheduler and workers: TypeScript
 * discriminated unions on `op`, with Dask's op names and camelCase fields.
 *
 * - `messagesTaskSpec.ts`: {@link TaskSpec}, what a task runs, and task references;
 * - `messagesWorker.ts`: scheduler ↔ worker;
 * - `messagesClient.ts`: client ↔ scheduler;
 * - this file: everything re-exported, and the addressed envelope the
 *   scheduler state machine emits.
 */

import type { SchedulerToClientMessage } from "./messagesClient.ts";
import type { SchedulerToWorkerMessage } from "./messagesWorker.ts";

export type {
  CancelKeysMsg,
  CancelledKeysMsg,
  ClientDesiresKeysMsg,
  ClientReleasesKeysMsg,
  ClientTaskErredMsg,
  ClientToSchedulerMessage,
  ClientToSchedulerOp,
  CloseClientMsg,
  DatasetMsg,
  DatasetPublishedMsg,
  DatasetUnpublishedMsg,
  DataUpdatedMsg,
  FireAndForgetMsg,
  GetDatasetMsg,
  GraphTask,
  KeyInMemoryMsg,
  LostDataMsg,
  PublishDatasetMsg,
  RebalancedMsg,
  RebalanceMsg,
  ReplicatedMsg,
  ReplicateMsg,
  RestartedMsg,
  RestartMsg,
  RestartWorkersMsg,
  RetireWorkersMsg,
  RetryMsg,
  ScatteredKey,
  SchedulerToClientMessage,
  SchedulerToClientOp,
  TaskNoWorkerMsg,
  TaskRetriedMsg,
  TaskRunnableMsg,
  UnpublishDatasetMsg,
  UpdateDataMsg,
  UpdateGraphMsg,
  WorkersRestartedMsg,
  WorkersRetiredMsg,
} from "./messagesClient.ts";
export type { Key, TaskRef, TaskSpec } from "./messagesTaskSpec.ts";
export {
  collectTaskRefs,
  isTaskRef,
  taskRef,
  taskSpecProblem,
} from "./messagesTaskSpec.ts";
export type {
  AcquireReplicasMsg,
  AddKeysMsg,
  CloseWorkerMsg,
  ComputeTaskMsg,
  FreeKeysMsg,
  HeartbeatWorkerMsg,
  LongRunningMsg,
  NBytes,
  PauseMsg,
  RefreshWhoHasMsg,
  RegisterWorkerMsg,
  ReleaseWorkerDataMsg,
  RemoveReplicasMsg,
  RemoveWorkerMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  Resources,
  SchedulerToWorkerMessage,
  SchedulerToWorkerOp,
  SpilledValues,
  StealRequestMsg,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
  UnpauseMsg,
  WhoHas,
  WorkerStatusChangeMsg,
  WorkerToSchedulerMessage,
  WorkerToSchedulerOp,
} from "./messagesWorker.ts";

/** The worker a message goes to. */
export interface WorkerRecipient {
  /** Tags the recipient as a worker. */
  readonly kind: "worker";
  /** The worker's address. */
  readonly address: string;
}

/** The client a message goes to. */
export interface ClientRecipient {
  /** Tags the recipient as a client. */
  readonly kind: "client";
  /** The client's ID (its `clientId`). */
  readonly id: string;
}

/** A message from the scheduler, addressed to one worker or one client. */
export type SchedulerMessage =
  | { readonly to: WorkerRecipient; readonly msg: SchedulerToWorkerMessage }
  | { readonly to: ClientRecipient; readonly msg: SchedulerToClientMessage };
