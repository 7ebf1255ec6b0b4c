/**
 * What a worker shell does with its state machine's messages: a
 * `SendMessageToScheduler` instruction becomes the message the scheduler state
 * machine takes. (The other direction is the real worker's own
 * `schedulerMessageToEvent`, which the simulated worker shares, validation included.)
 */

import type { WorkerToSchedulerMessage } from "../protocol/messagesWorker.ts";
import { schedulerMessage } from "../worker/schedulerMessage.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";
import type { SendMessageToScheduler } from "../worker/state/instructions.ts";

/**
 * The scheduler message a worker instruction, returned for `stims`, stands for: its
 * wire form, as the real worker sends it (`schedulerMessage`).
 */
export function messageForInstruction(
  inst: SendMessageToScheduler,
  stims: readonly StateMachineEvent[],
): WorkerToSchedulerMessage {
  return schedulerMessage(inst, stims) as unknown as WorkerToSchedulerMessage;
}
