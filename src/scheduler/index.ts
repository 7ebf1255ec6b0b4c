/** The scheduler server around `SchedulerState` (in `./state/`). */

// The handshakes and what the server sends a client after them (the state
// machine's messages to clients are exported by `./state/`).
export type {
  AmmMethod,
  AmmRequestMsg,
  AmmStatus,
  AnswerUnsentMsg,
  CoordinationOp,
  CoordinationRequestMsg,
  EventMsg,
  KeyInMemoryWithHoldersMsg,
  MessageRefusedMsg,
  MetadataRequestMsg,
  NannyPluginSpec,
  PubSubMsg,
  PubSubPutMsg,
  ReceiveLimit,
  RegisterClientMsg,
  RegisterRefusalCode,
  RegisterReplyMsg,
  RegisterWorkerHandshakeMsg,
  ReplyMsg,
  SchedulerFailedMsg,
  ServerToClientMessage,
  TaskStreamRecord,
  TaskStreamRequestMsg,
  WireVersion,
  WorkerPluginSpec,
} from "../protocol/messagesSession.ts";
export type { UploadedFile } from "../protocol/uploads.ts";
export { CloseBudget } from "../util/closeBudget.ts";
export { LogRecords } from "../util/logRecords.ts";
export { AmmControl } from "./ammControl.ts";
export { ClientProfiles, type ProfileToDiscard } from "./clientProfiles.ts";
export {
  COORDINATION_OPS,
  Coordination,
  type CoordinationLog,
  type ExpiredLease,
} from "./coordination/coordination.ts";
export { Events } from "./coordination/events.ts";
export {
  HELD_DATASET_PREFIX,
  HeldDatasetOwners,
  isHeldDataset,
} from "./coordination/heldDatasets.ts";
export {
  type LeaseClock,
  type LeaseRefresh,
  leaseRefreshIntervalMs,
  MONOTONIC_CLOCK,
} from "./coordination/leases.ts";
export { MultiLocks } from "./coordination/multiLocks.ts";
export { type PutOrTimeout, Queues } from "./coordination/queues.ts";
export { Semaphores } from "./coordination/semaphores.ts";
export { type ValueOrTimeout, Variables } from "./coordination/variables.ts";
export { DEFERRED, type Reply, type Waiter, Waiters } from "./coordination/waiters.ts";
export { Counters } from "./counters.ts";
export { EventBroker, type EventSink, type LoggedEvent, logWorkerEvent } from "./events.ts";
export type { SchedulerIdentity } from "./identity.ts";
export { Metadata } from "./metadata.ts";
export {
  type GraphUpdate,
  type SchedulerPlugin,
  SchedulerPlugins,
  type SessionHook,
  schedulerPluginProblem,
} from "./plugins.ts";
export { PubSubBroker, type PubSubSink } from "./pubsub.ts";
export { Router } from "./router.ts";
export { Scheduler, type SchedulerStatus } from "./scheduler.ts";
export { currentScheduler, SchedulerCode, type SchedulerRunOutcome } from "./schedulerCode.ts";
export {
  type ResolvedSchedulerOptions,
  resolveSchedulerOptions,
  type SchedulerOptions,
} from "./schedulerOptions.ts";
export type { SessionHost } from "./sessionHost.ts";
export { type RunOutcome, StimulusRunner } from "./stimulusRunner.ts";
export { TaskStream, type TaskStreamQuery } from "./taskStream.ts";
export { type CutConnection, WorkerClients } from "./workerClients.ts";
