/** The worker state machine: a faithful port of Dask's `worker_state_machine.py`. */
export type { DataStore, WorkerPlugin } from "./dataStore.ts";
export { type ErrorMessage, errorMessage, TaskError } from "./errorMessage.ts";
export {
  formatLogEntry,
  InvalidTaskState,
  InvalidTransition,
  RecommendationsConflict,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
export * from "./events.ts";
export * from "./instructions.ts";
export { type LogEntry, LoggedRecs, TransitionLog, workerStory } from "./log.ts";
export { type Finish, Recs } from "./recs.ts";
export { TaskCounter } from "./taskCounter.ts";
export * from "./taskState.ts";
export { lookupTransition, TRANSITIONS_TABLE } from "./transitions.ts";
export { WorkerState, type WorkerStateChooser, type WorkerStateOptions } from "./workerState.ts";
