/**
 * The package's main entry (`import … from "weft"`): `Client`, futures, graphs,
 * `LocalCluster`, and what task modules use (`defineTask`, `secede`, …).
 */

export { ConnectError, MessageTooLargeError, SerializationError } from "../comm/errors.ts";
export type { ActorOp, ActorRef } from "../protocol/actors.ts";
export type {
  AmmMethod,
  AmmStatus,
  CoordinationOp,
  MultiLockOp,
  PubSubRequestMsg,
  SchedulerCounters,
  TaskStreamRecord,
  WorkerIdentity,
} from "../protocol/messagesSession.ts";
export { taskRef } from "../protocol/messagesTaskSpec.ts";
export type { Resources } from "../protocol/messagesWorker.ts";
export type { LogRecord } from "../util/logRecords.ts";
export {
  type ReadSchedulerFileOptions,
  readSchedulerFile,
  type SchedulerFileContent,
} from "../util/schedulerFile.ts";
export { environ } from "../worker/environ.ts";
export type { Nanny, NannyPluginHooks } from "../worker/nannyPlugins.ts";
export { TaskError } from "../worker/state/errorMessage.ts";
export { currentTaskKey, Reschedule, rejoin, secede } from "../worker/taskContext.ts";
export { defineTask, type TaskDefinition, type TaskFunction } from "../worker/taskRegistry.ts";
export type { WorkerPluginHooks } from "../worker/workerPlugins.ts";
export {
  Actor,
  type ActorArgs,
  ActorError,
  type ActorField,
  type ActorHost,
  type ActorKeepAlive,
  type ActorMethod,
  type ActorResult,
} from "./actor.ts";
export { Adaptive, type AdaptiveHost, type AdaptOptions } from "./adaptive.ts";
export { ActiveMemoryManagerClient, type AmmRequest } from "./amm.ts";
export { Client } from "./client.ts";
export type { ClientOptions } from "./clientOptions.ts";
export type { ClusterDumpFormat, DumpClusterStateOptions } from "./clusterDump.ts";
export {
  AsCompleted,
  asCompleted,
  type Completed,
  type DoneAndNotDone,
  type WaitOptions,
  WaitTimeoutError,
  wait,
} from "./completion.ts";
export {
  type CoordinationRequest,
  type CoordinationWaitOptions,
  Event,
  type HeldDatasets,
  Lock,
  MultiLock,
  Queue,
  Semaphore,
  Variable,
} from "./coordination.ts";
export {
  CancelledError,
  ClientClosedError,
  CoordinationTimeoutError,
  DatasetError,
  LostKeyError,
  MetadataKeyError,
  NannyPluginError,
  NoWorkerError,
  QueueItemsLostError,
  RebalanceError,
  RemoteTaskError,
  ReplicateError,
  RestartTimeoutError,
  ResultFetchError,
  RunError,
  ScatterError,
  SchedulerReplyError,
  TaskModuleError,
  UploadError,
  WorkerPluginError,
  WorkersTimeoutError,
} from "./errors.ts";
export type { ClusterEvent, EventHandler } from "./events.ts";
export { Future, type FutureHost, isFuture } from "./future.ts";
export type {
  FutureArgs,
  FutureOr,
  Gathered,
  GatheredValue,
  NotSearched,
  TaskResult,
} from "./futureTypes.ts";
export type { GatherHost } from "./gatherer.ts";
export {
  type BuiltGraph,
  buildGraph,
  type Graph,
  type GraphOptions,
  type GraphTaskEntry,
  isTaskEntry,
  type Literal,
  literal,
} from "./graph.ts";
export { HeldLeases, type LeaseKind, type SendRefresh } from "./heldLeases.ts";
export type { FutureStatus, KeyRecord } from "./keyRecord.ts";
export {
  LocalCluster,
  type LocalClusterOptions,
  type SchedulerSetByCluster,
  type WorkerSetByCluster,
} from "./localCluster.ts";
export type { LogsOptions, WorkerLogsOptions } from "./logs.ts";
export type { MapOptions } from "./mapKeys.ts";
export type { NannyPluginOptions } from "./nannyPlugins.ts";
export type { PerformanceReportOptions } from "./performanceReport.ts";
export {
  type ClusterProfile,
  type FailedWorker,
  type FunctionTime,
  mergeProfiles,
  type ProfiledThread,
  type ProfileOptions,
  topFunctions,
} from "./profile.ts";
export { Pub, type PubSubLink, Sub, type SubOptions } from "./pubsub.ts";
export type { RunOptions } from "./runOnWorkers.ts";
export type { ScatterOptions } from "./scatter.ts";
export { SendOrder } from "./sendOrder.ts";
export type { StoryRecord } from "./story.ts";
export type { ComputeOptions, SubmitOptions } from "./submitOptions.ts";
export { getClient, workerClient } from "./taskClient.ts";
export { type PrintedMessage, print, warn } from "./taskPrint.ts";
export type { UploadFileOptions } from "./uploads.ts";
export type { WorkerPluginOptions } from "./workerPlugins.ts";
