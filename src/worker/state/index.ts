/** The worker state machine: a faithful port of Dask's `worker_state_machine.py`. */

// The Dask dict form of an event ("cls" and the seed's field names), which
// handleStimulus's refusal of a non-event names.
export { eventFromDict, type ValueDecoder } from "../../protocol/daskJson/events.ts";
export { DaskDictError } from "../../protocol/daskJson/fields.ts";
// The containers its fields are (shared with the scheduler's state machine).
export { BoundedDeque } from "../../util/boundedDeque.ts";
export { FlatRing, TimedFlatRing } from "../../util/flatRing.ts";
export { type HeapMarked, HeapSet } from "../../util/heapSet.ts";
// What the seed imports (docs/worker-state.md, "The seed's names"), and the
// Python errors it raises, which a caller catches by class.
export { keySplit } from "../../util/keySplit.ts";
export { PyRandom } from "../../util/mt19937.ts";
export { parseBytes } from "../../util/parseBytes.ts";
export type { Priority } from "../../util/priority.ts";
export { AssertionError, KeyError, PyTypeError, RuntimeError } from "../../util/pyErrors.ts";
export type { DataStore, WorkerPlugin } from "./dataStore.ts";
export {
  type ErrorMessage,
  errorMessage,
  MAX_ERROR_LENGTH,
  TaskError,
  truncateErrorText,
} from "./errorMessage.ts";
export {
  formatLogEntry,
  InvalidTaskState,
  InvalidTransition,
  RecommendationsConflict,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
// The constructors of events copied for the stimulus log take it: their fields were checked already.
export { FIELDS_CHECKED } from "./eventFields.ts";
export * from "./events.ts";
export * from "./instructions.ts";
export { type LogEntry, LoggedRecs, TransitionLog, workerStory } from "./log.ts";
export { type Finish, type FinishWithArgs, Recs } from "./recs.ts";
export { type PrefixStateValue, TaskCounter } from "./taskCounter.ts";
export * from "./taskState.ts";
export type { DebugValue } from "./toDict.ts";
export {
  lookupTransition,
  TRANSITIONS_TABLE,
  type TransitionEntry,
  type TransitionFn,
} from "./transitions.ts";
export type { ValidateStateOptions } from "./validation.ts";
export { WorkerState, type WorkerStateChooser, type WorkerStateOptions } from "./workerState.ts";
