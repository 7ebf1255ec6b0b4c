/**
 * Replay and inspection of Dask worker logs (`weft replay`, `weft story`): rebuild
 * each worker of a Dask cluster dump from its stimulus log and check it against the
 * dumped log, counter and tasks; replay conformance vectors and stimulus streams;
 * tell the story of tasks across a dump's scheduler and workers. See docs/replay.md.
 */
// What `loadDump` gives and `replayLoadedDump` and `clusterStory` take: a parsed dump.
export type {
  ClusterDump,
  DumpEncoding,
  DumpEvent,
  DumpList,
  DumpObject,
  DumpTask,
  DumpValue,
  DumpVersions,
  SchedulerDump,
  TaskRef,
  WorkerDump,
  WorkerLogEntry,
  WorkerLogRecord,
  WorkerStateParameters,
} from "../protocol/clusterDump.ts";
export { DaskConfig } from "../protocol/clusterDump.ts";
export { ReplayClock } from "./clock.ts";
export { type LogCoverage, logCoverage } from "./coverage.ts";
export { decodeStimulusLog, dumpEventDict, UNKNOWN_TYPENAME } from "./dumpEvents.ts";
export { ReplayInputError, toInputError } from "./errors.ts";
export { type EventGroup, eventGroups } from "./eventGroups.ts";
export { ExpectedLog } from "./expectedLog.ts";
export { LogFollower } from "./follower.ts";
export { type FormatReportOptions, formatReport, formatWorker } from "./formatReport.ts";
export { formatStory, storyJson } from "./formatStory.ts";
export { INPUT_EXTENSIONS, type InputKind, inputKindOf } from "./inputKind.ts";
export { compareRecords, type RecordDifference, type RecordsVerdict } from "./logComparison.ts";
export { type ComparableRecord, comparableRecord, isShellRecord } from "./records.ts";
export {
  type DumpReplay,
  loadDump,
  type ReplayDumpOptions,
  replayDump,
  replayLoadedDump,
} from "./replayDump.ts";
export { type FileReplay, type ReplayFileOptions, replayFile } from "./replayFile.ts";
export { type ReplayWorkerOptions, replayWorker, type WorkerReplay } from "./replayWorker.ts";
export type * from "./report.ts";
export { type ClusterStoryOptions, clusterStory, SCHEDULER, type StoryLine } from "./story.ts";
export {
  type ReplayStreamOptions,
  readStream,
  replayStreamFile,
  type Stream,
} from "./streamReplay.ts";
export {
  COMPARED_TASK_FIELDS,
  compareTasks,
  type FieldDifference,
  type TaskComparison,
  type TaskMismatch,
} from "./taskComparison.ts";
export { replayVectorFile } from "./vectorReplay.ts";
export { workerStateOptions } from "./workerConfig.ts";
