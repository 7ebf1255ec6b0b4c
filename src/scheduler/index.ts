/** The scheduler server around `SchedulerState` (in `./state/`). */

// The handshakes and what the server sends a client after them (the state
// machine's messages to clients are exported by `./state/`).
export type {
  KeyInMemoryWithHoldersMsg,
  RegisterClientMsg,
  RegisterReplyMsg,
  RegisterWorkerHandshakeMsg,
  ReplyMsg,
  SchedulerFailedMsg,
  ServerToClientMessage,
  WireVersion,
} from "../protocol/messagesSession.ts";
export type { UploadedFile } from "../protocol/uploads.ts";
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
