/**
 * The messages the scheduler state machine queues while it handles a call's
 * stimuli, in order, handed out at the end of the call.
 *
 * One thing beyond a list: a `free-keys` joins the `free-keys` queued just
 * before it for the same worker by the same stimulus. A finished task often
 * releases more than one input held on one worker, and a client releasing its
 * results releases thousands at once; the worker then handles one event
 * instead of one per key (each with its stimulus record and its pass of
 * transitions). Only the message last queued for that worker is joined, so the
 * order of the messages a worker receives is unchanged.
 */

import type {
  SchedulerMessage,
  SchedulerToClientMessage,
  SchedulerToWorkerMessage,
} from "../../protocol/messages.ts";
import type { ClientInfo } from "./clientInfo.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** A queued `free-keys` still open to more keys: its own mutable key list. */
export interface OpenFreeKeys {
  /** The keys to free so far; more are appended while the batch is open. */
  readonly keys: string[];
  /** The stimulus the message is sent for. */
  readonly stimulusId: string;
  /** The outbox batch it was queued in. */
  readonly batch: number;
}

/** The scheduler's queue of outgoing messages (see the module comment). */
export class Outbox {
  private messages: SchedulerMessage[] = [];
  /** Bumped each time the messages are handed out or dropped: closes every open free-keys. */
  private batch = 1;

  /** Queue `msg` for the worker `ws`. */
  toWorker(ws: WorkerInfo, msg: SchedulerToWorkerMessage): void {
    this.messages.push({ to: ws.recipient, msg });
    ws.openFreeKeys = null;
  }

  /** Queue `msg` for the client `cs`. */
  toClient(cs: ClientInfo, msg: SchedulerToClientMessage): void {
    this.messages.push({ to: cs.recipient, msg });
  }

  /**
   * Queue `free-keys` of `key` for `ws` on behalf of `stimulusId`, joining the
   * previous message if it is such a `free-keys` of the same stimulus.
   */
  freeKeys(ws: WorkerInfo, key: string, stimulusId: string): void {
    const open = ws.openFreeKeys;
    if (open !== null && open.batch === this.batch && open.stimulusId === stimulusId) {
      open.keys.push(key);
      return;
    }
    const keys = [key];
    this.toWorker(ws, { op: "free-keys", keys, stimulusId });
    ws.openFreeKeys = { keys, stimulusId, batch: this.batch };
  }

  /** The queued messages, in order; the outbox is empty afterwards. */
  take(): SchedulerMessage[] {
    const out = this.messages;
    this.messages = [];
    this.batch++;
    return out;
  }
}
