/**
 * The worker runtime: {@link Worker}, task definition ({@link defineTask}) and
 * the task-side API ({@link secede}, {@link rejoin}, {@link currentTaskKey},
 * {@link Reschedule}). The state machine is in `./state/index.ts`.
 */
export {
  type AsyncInstructionContext,
  BaseWorker,
  type MetricName,
  type MetricsLedger,
  WorkerClosed,
} from "./baseWorker.ts";
export { contactAddressFor } from "./contactAddress.ts";
export {
  DataServer,
  type DataServerHost,
  type GetDataResponse,
  parseGetDataResponse,
} from "./dataServer.ts";
export { environ } from "./environ.ts";
export type {
  ExecuteJob,
  ExecuteOutcome,
  Executor,
  RunControl,
  RunTiming,
  SerializedError,
} from "./executor.ts";
export { InlineExecutor } from "./inlineExecutor.ts";
export {
  type MemoryMeasure,
  MemoryMonitor,
  type MemoryMonitorHooks,
  type MemoryThresholds,
  type MemoryVerdict,
  memoryVerdict,
} from "./memoryMonitor.ts";
export {
  type CloseNotice,
  type IpcEnd,
  ipcNannyLink,
  NANNY_ANSWER_TIMEOUT_MS,
  type NannyLink,
} from "./nannyLink.ts";
export {
  type InstalledNannyPlugin,
  NANNY_PLUGIN_SETUP_TIMEOUT_MS,
  NANNY_REQUEST_TIMEOUT_MS,
  type Nanny,
  type NannyPluginAdded,
  type NannyPluginFactories,
  type NannyPluginHooks,
  NannyPlugins,
  nannyPluginProblem,
} from "./nannyPlugins.ts";
export { type PauseChange, PauseReasons } from "./pauseReasons.ts";
export { PeerPool, type PeerPoolOptions } from "./peerPool.ts";
export { PiscinaExecutor, type PiscinaExecutorOptions } from "./piscinaExecutor.ts";
export { PluginRegistry, type UnfinishedStep } from "./pluginRegistry.ts";
export {
  type CpuProfile,
  CpuProfiler,
  checkProfileSettings,
  type ProfileSettings,
  type ThreadProfile,
  type WorkerProfile,
} from "./profiler.ts";
export type { RegisterWorkerReply } from "./registration.ts";
export {
  type HeldActors,
  MissingDependencyError,
  type ResolvedArgs,
  resolveArgs,
} from "./resolveArgs.ts";
export { MalformedMessageError, schedulerMessageToEvent } from "./schedulerEvents.ts";
export { SpilledValueLostError } from "./spilledValueLost.ts";
export { type SpillStats, SpillStore, type SpillStoreOptions } from "./spillStore.ts";
export { TaskError } from "./state/errorMessage.ts";
export { currentTaskKey, Reschedule, rejoin, secede } from "./taskContext.ts";
export {
  defineTask,
  getTaskFunction,
  lookupTaskFunction,
  type TaskDefinition,
  type TaskFunction,
  taskFunctionNames,
  UnknownTaskFunctionError,
} from "./taskRegistry.ts";
export { ThreadInspector, threadInspector } from "./threadInspector.ts";
export {
  parseUpdateDataResponse,
  type UpdateDataHost,
  type UpdateDataResponse,
  updateDataHandler,
} from "./updateData.ts";
export { Worker, type WorkerStatus } from "./worker.ts";
export {
  type ResolvedWorkerOptions,
  resolveWorkerOptions,
  type WorkerOptions,
} from "./workerOptions.ts";
export { type WorkerPluginHooks, WorkerPlugins, workerPluginProblem } from "./workerPlugins.ts";
