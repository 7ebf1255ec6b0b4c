/**
 * How many of a client's requests the scheduler is answering at once: those
 * whose answers are being made (`dump-state`, over several turns) or wait on
 * the client's stream, not yet taken by the transport. Past
 * {@link MAX_ANSWERS_IN_FLIGHT} the client's session reads no further message
 * of it until some are taken (see `clientSession.ts`): a client sending
 * thousands of requests at once, or one that does not read its answers, made
 * the scheduler hold every answer (2,000 `dump-state`: from 160 to 837 MiB),
 * and coalesce them into one batch whose encoding stalled every other client
 * and worker for seconds. Dask sets no such bound.
 *
 * Counted as well: the answers the state machine sends by stimulus id to the
 * client messages of {@link ANSWERED_MESSAGES} (a `get-dataset`'s `dataset`,
 * holding the dataset's value). Not counted, a client sending 600 `get-dataset`
 * of a dataset of 128 KiB and not reading had the scheduler hold all 600 (75 MiB),
 * as many as it sent.
 *
 * Not counted: a coordination request waiting on other clients (a lock held,
 * an empty queue) or the scheduler code a request runs, until its answer is
 * queued. Counted, they could hold the client's next requests (the release
 * they wait for) back for good.
 */

import type { ReplyMsg } from "../protocol/messagesSession.ts";
import { RoomSignal } from "../util/roomSignal.ts";
import { sizeof } from "../util/sizeof.ts";

/** A client's requests the scheduler answers at once, at most (see the module's doc). */
export const MAX_ANSWERS_IN_FLIGHT = 64;

/**
 * The client messages (not requests) the state machine answers to their sender,
 * one answer each, by stimulus id: `{message's op: its answer's op}`.
 */
const ANSWERED_MESSAGES: ReadonlyMap<string, string> = new Map([
  ["publish-dataset", "dataset-published"],
  ["get-dataset", "dataset"],
  ["unpublish-dataset", "dataset-unpublished"],
  ["update-data", "data-updated"],
  ["replicate", "replicated"],
  ["rebalance", "rebalanced"],
  ["retire-workers", "workers-retired"],
  ["restart", "restarted"],
  ["restart-workers", "workers-restarted"],
]);

/** The ops of those answers. */
const STIMULUS_ANSWERS: ReadonlySet<string> = new Set(ANSWERED_MESSAGES.values());

/** Whether `msg` is a client message the state machine answers (see {@link ANSWERED_MESSAGES}). */
export function isAnsweredMessage(msg: { readonly op?: unknown }): boolean {
  return typeof msg.op === "string" && ANSWERED_MESSAGES.has(msg.op);
}

/**
 * The requests whose answers may be large whatever the request's size (what the
 * scheduler keeps: events, logs, the task stream, a dump): each sent in a batch
 * of its own (`BatchedSendOptions.alone`), so that one at a time is encoded.
 * Coalesced, 16 `get-events` of a topic of 100 MiB took the scheduler from 0.6
 * to 1.6 GiB; 64, past 6 GiB. The count bound alone does not bound their bytes.
 */
const LARGE_ANSWERS: ReadonlySet<string> = new Set([
  "task-stream",
  "logs",
  "dump-state",
  "story",
  "get-events",
  "profile-stop",
]);

/**
 * The requests whose answers are small but for some (a `who-has` of every key, a
 * variable holding a large value): sent alone only when their result's estimate
 * (`sizeof`) reaches {@link LARGE_ANSWER_BYTES}. Each sent alone, 1,000 concurrent
 * `who-has` took 4 to 6 times as long as coalesced, for nothing.
 */
const MAYBE_LARGE_ANSWERS: ReadonlySet<string> = new Set([
  "who-has",
  "has-what",
  "processing",
  "nbytes",
  "get-metadata",
  "run-on-scheduler",
  "variable-get",
  "queue-get",
  "queue-get-batch",
]);

/** The estimated size from which an answer of {@link MAYBE_LARGE_ANSWERS} goes alone. */
export const LARGE_ANSWER_BYTES = 1024 * 1024;

/** Whether the answer `msg`, to a request of op `op` (if known), goes in a batch of its own. */
export function isLargeAnswer(msg: unknown, op: string | undefined): boolean {
  const answer = msg as { readonly op?: unknown; readonly result?: unknown } | null;
  if (answer?.op === "dataset") return true;
  if (answer?.op !== "reply" || op === undefined) return false;
  if (LARGE_ANSWERS.has(op)) return true;
  return MAYBE_LARGE_ANSWERS.has(op) && sizeof(answer.result) >= LARGE_ANSWER_BYTES;
}

/** The requests answered over several turns of the scheduler's own work: counted from their start. */
const MADE_OVER_TURNS: ReadonlySet<string> = new Set(["dump-state"]);

/** `msg` if it is an answer: a request's `reply`, or one of {@link STIMULUS_ANSWERS}. */
function answerOf(msg: unknown): Partial<ReplyMsg> | null {
  const answer = msg as { readonly op?: unknown } | null;
  if (typeof answer?.op !== "string") return null;
  return answer.op === "reply" || STIMULUS_ANSWERS.has(answer.op)
    ? (answer as Partial<ReplyMsg>)
    : null;
}

/** One client's answers in flight. */
export class AnswerBacklog {
  private inFlight = 0;
  /** The requests of {@link MADE_OVER_TURNS} being answered, by request id (a client may repeat one). */
  private readonly making = new Map<number, number>();
  /** The answers queued and counted, until taken (identity: an answer is its own object). */
  private readonly queuedAnswers = new WeakSet<object>();
  private readonly room = new RoomSignal();
  private closed = false;

  constructor(readonly limit: number = MAX_ANSWERS_IN_FLIGHT) {}

  /** Answers in flight. */
  get size(): number {
    return this.inFlight;
  }

  /** True when the client's next request is to wait ({@link whenRoom}). */
  get full(): boolean {
    return this.inFlight >= this.limit && !this.closed;
  }

  /** The client asked `msg`: one made over several turns is counted from now. */
  asked(msg: { readonly op?: unknown; readonly requestId?: unknown }): void {
    const { op, requestId } = msg;
    if (typeof op !== "string" || !MADE_OVER_TURNS.has(op) || !Number.isSafeInteger(requestId)) {
      return;
    }
    const id = requestId as number;
    this.making.set(id, (this.making.get(id) ?? 0) + 1);
    this.inFlight++;
  }

  /** `msg` was queued on the client's stream: an answer is counted until taken. */
  queued(msg: unknown): void {
    const reply = answerOf(msg);
    if (reply === null) return;
    this.queuedAnswers.add(reply);
    const id = reply.op === "reply" ? reply.requestId : undefined;
    const making = typeof id === "number" ? this.making.get(id) : undefined;
    if (making === undefined) {
      this.inFlight++;
      return;
    }
    // Counted since it was asked.
    if (making > 1) this.making.set(id as number, making - 1);
    else this.making.delete(id as number);
  }

  /** The transport took `batch` (or dropped those of its messages it could not send). */
  taken(batch: readonly unknown[]): void {
    for (const msg of batch) {
      const reply = answerOf(msg);
      if (reply !== null && this.queuedAnswers.delete(reply)) this.inFlight--;
    }
    if (this.room.waiting && this.inFlight < this.limit) this.room.open();
  }

  /** Resolves once the client's next request may be answered (or the connection ended). */
  whenRoom(): Promise<void> {
    return this.full ? this.room.wait() : Promise.resolve();
  }

  /** The connection ended: nothing waits any more. */
  close(): void {
    this.closed = true;
    this.room.open();
  }
}
