/**
 * What a worker shell does with its state machine's messages: a
 * `SendMessageToScheduler` instruction becomes the message the scheduler state
 * machine takes. (The other direction is the real worker's own
 * `schedulerMessageToEvent`, which the simulated worker shares, validation included.)
 */

import type { WorkerToSchedulerMessage } from "../protocol/messagesWorker.ts";
import { type SendMessageToScheduler, toMessage } from "../worker/state/instructions.ts";

/** The scheduler message a worker instruction stands for (its wire form, as `toMessage` gives it). */
export function messageForInstruction(inst: SendMessageToScheduler): WorkerToSchedulerMessage {
  return toMessage(inst) as unknown as WorkerToSchedulerMessage;
}
