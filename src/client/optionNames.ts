/**
 * The option names of the `Client` methods and the functions beside them, so
 * that a name none of them has is refused (see `knownOptionsOf`): TypeScript
 * refuses one only in an object literal written at the call, and a misspelt
 * wait (`{ timeout: 5_000 }`, Dask's name, for `timeoutMs`) waited forever.
 */

import type { OptionNames } from "../util/knownOptions.ts";
import type { DumpClusterStateOptions } from "./clusterDump.ts";
import type { WaitOptions } from "./completion.ts";
import type { LogsOptions, WorkerLogsOptions } from "./logs.ts";
import type { NannyPluginOptions } from "./nannyPlugins.ts";
import type { PerformanceReportOptions } from "./performanceReport.ts";
import type { ProfileOptions } from "./profile.ts";
import type { SubOptions } from "./pubsub.ts";
import type { RunOptions } from "./runOnWorkers.ts";
import type { ScatterOptions } from "./scatter.ts";
import type { UploadFileOptions } from "./uploads.ts";
import type { WorkerPluginOptions } from "./workerPlugins.ts";

/** `scatter`'s options. */
export const SCATTER_OPTIONS: OptionNames<ScatterOptions> = {
  workers: true,
  broadcast: true,
  timeoutMs: true,
};

/** `publishDataset`'s options. */
export const PUBLISH_OPTIONS: OptionNames<{ override?: boolean }> = { override: true };

/** The options of `getDataset` and `getMetadata`. */
export const DEFAULT_OPTIONS: OptionNames<{ default?: unknown }> = { default: true };

/** `cancel`'s options. */
export const CANCEL_OPTIONS: OptionNames<{ force?: boolean }> = { force: true };

/** The options of `runWith`. */
export const RUN_OPTIONS: OptionNames<RunOptions> = { workers: true, onError: true };

/** `semaphore`'s options. */
export const SEMAPHORE_OPTIONS: OptionNames<{ maxLeases?: number }> = { maxLeases: true };

/** `queue`'s options. */
export const QUEUE_OPTIONS: OptionNames<{ maxsize?: number }> = { maxsize: true };

/** `sub`'s options. */
export const SUB_OPTIONS: OptionNames<SubOptions> = { maxBuffered: true };

/** `getTaskStream`'s options. */
export const TASK_STREAM_OPTIONS: OptionNames<{ since?: number; count?: number }> = {
  since: true,
  count: true,
};

/** `getSchedulerLogs`'s options. */
export const LOGS_OPTIONS: OptionNames<LogsOptions> = { n: true };

/** `getWorkerLogs`'s options. */
export const WORKER_LOGS_OPTIONS: OptionNames<WorkerLogsOptions> = { n: true, workers: true };

/** `nbytes`'s options. */
export const NBYTES_OPTIONS: OptionNames<{ summary?: boolean }> = { summary: true };

/** `wait`'s options. */
export const WAIT_OPTIONS: OptionNames<WaitOptions> = { returnWhen: true, timeout: true };

/** The options of `restart` and `restartWorkers`. */
export const RESTART_OPTIONS: OptionNames<{ timeoutMs?: number; waitForWorkers?: boolean }> = {
  timeoutMs: true,
  waitForWorkers: true,
};

/** `replicate`'s options. */
export const REPLICATE_OPTIONS: OptionNames<{ n?: number; workers?: unknown }> = {
  n: true,
  workers: true,
};

/** `rebalance`'s options. */
export const REBALANCE_OPTIONS: OptionNames<{ workers?: unknown }> = { workers: true };

/** `waitForWorkers`'s options. */
export const WAIT_FOR_WORKERS_OPTIONS: OptionNames<{ timeoutMs?: number; pollMs?: number }> = {
  timeoutMs: true,
  pollMs: true,
};

/** `uploadFile`'s options. */
export const UPLOAD_OPTIONS: OptionNames<UploadFileOptions> = { load: true };

/** `registerWorkerPlugin`'s options. */
export const WORKER_PLUGIN_OPTIONS: OptionNames<WorkerPluginOptions> = { name: true, args: true };

/** `registerNannyPlugin`'s options. */
export const NANNY_PLUGIN_OPTIONS: OptionNames<NannyPluginOptions> = {
  name: true,
  args: true,
  restart: true,
};

/** `profile`'s options. */
export const PROFILE_OPTIONS: OptionNames<ProfileOptions> = {
  workers: true,
  intervalUs: true,
  maxMs: true,
  path: true,
  scheduler: true,
};

/** `performanceReport`'s options. */
export const PERFORMANCE_REPORT_OPTIONS: OptionNames<PerformanceReportOptions> = { profile: true };

/** The profiling settings `performanceReport`'s `profile` may give. */
export const PROFILE_SETTINGS_OPTIONS: OptionNames<Pick<ProfileOptions, "intervalUs" | "maxMs">> = {
  intervalUs: true,
  maxMs: true,
};

/** `dumpClusterState`'s options. */
export const DUMP_OPTIONS: OptionNames<DumpClusterStateOptions> = { format: true };
