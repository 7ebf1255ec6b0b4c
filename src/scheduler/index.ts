/** The scheduler server around `SchedulerState` (in `./state/`). */

// What the server sends a client after the handshake (the state machine's
// messages to clients are exported by `./state/`).
export type {
  KeyInMemoryWithHoldersMsg,
  ReplyMsg,
  SchedulerFailedMsg,
  ServerToClientMessage,
} from "../protocol/messagesSession.ts";
export { Counters } from "./counters.ts";
export { Router } from "./router.ts";
export { Scheduler, type SchedulerStatus } from "./scheduler.ts";
export {
  type ResolvedSchedulerOptions,
  resolveSchedulerOptions,
  type SchedulerOptions,
} from "./schedulerOptions.ts";
export type { SessionHost } from "./sessionHost.ts";
export { type RunOutcome, StimulusRunner } from "./stimulusRunner.ts";
