/**
 * What the scheduler sends a client in place of a message it cannot send it
 * (larger than the client's `maxMessageBytes`, which it said when it
 * registered, or than the scheduler's own, or not encodable: a value
 * `run-on-scheduler` returned that cannot be cloned), so that nothing of the
 * client waits forever for a message that was dropped:
 *
 * - a `reply` becomes an error reply to the same request, naming its op, the
 *   sizes and whose limit (the client's call rejects with it);
 * - an answer by stimulus id (`dataset`, `data-updated`, …) becomes
 *   `answer-unsent` (the client's request fails with its error);
 * - a `task-erred` (an error whose texts are too large) becomes one whose text
 *   says so and gives the error's start (the future fails);
 * - a `cancelled-keys` of many keys goes in two halves.
 *
 * Anything else (an `event`, a `pubsub-msg`, …) stays dropped, as the stream
 * logs it: nothing of the client waits for one in particular.
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { errorStart } from "../protocol/errorStart.ts";
import { keysInHalves } from "../protocol/keysInHalves.ts";
import type { CancelledKeysMsg, ClientTaskErredMsg } from "../protocol/messagesClient.ts";
import type { AnswerUnsentMsg, ReplyMsg } from "../protocol/messagesSession.ts";

/** The answers the client matches to its requests by stimulus id (its `Requests`). */
export const ANSWER_OPS: ReadonlySet<string> = new Set([
  "data-updated",
  "replicated",
  "rebalanced",
  "workers-retired",
  "restarted",
  "workers-restarted",
  "dataset-published",
  "dataset",
  "dataset-unpublished",
]);

/**
 * The ops of one client's requests, for the error reply that replaces an
 * answer that cannot be sent: by request id until answered, then by the
 * answer, until it is sent or dropped (the answer is not kept alive by it).
 */
export class RequestOps {
  private readonly unanswered = new Map<number, string>();
  private readonly answers = new WeakMap<object, string>();

  /** The client asked `msg` (a request to the server). */
  asked(msg: { readonly op?: unknown; readonly requestId?: unknown }): void {
    const { op, requestId } = msg;
    if (typeof op === "string" && Number.isSafeInteger(requestId)) {
      this.unanswered.set(requestId as number, op);
    }
  }

  /** `msg` is queued for the client: if it is a reply, it answers its request. */
  queued(msg: unknown): void {
    const reply = msg as Partial<ReplyMsg> | null;
    if (reply?.op !== "reply" || typeof reply.requestId !== "number") return;
    const op = this.unanswered.get(reply.requestId);
    if (op === undefined) return;
    this.unanswered.delete(reply.requestId);
    this.answers.set(reply, op);
  }

  /** The op of the request `reply` answers, if known. */
  of(reply: object): string | undefined {
    return this.answers.get(reply);
  }
}

/**
 * Why a message could not be sent, as the client's error says it: the
 * `MessageTooLargeError` naming whose limit (the scheduler's own when the
 * comm's), or the error's name and message.
 */
export function unsentWhy(err: unknown): string {
  if (err instanceof MessageTooLargeError) {
    const { bytes, limit, whose } = err;
    const named = new MessageTooLargeError(
      bytes,
      limit,
      "send",
      whose ?? "the scheduler's --max-message-bytes",
    );
    return `${named.name}: ${named.message}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** The stand-ins sent so far: one that cannot be sent either is dropped, not replaced again. */
const standIns = new WeakSet<object>();

/** What stands in for a message that could not be sent. */
export interface StandIns {
  /** The messages to send in its place; none: it stays dropped. */
  readonly messages: readonly object[];
  /** Whether they carry all of it (the halves of its keys), so that nothing was lost. */
  readonly whole: boolean;
}

const NONE: StandIns = { messages: [], whole: false };

/**
 * What to send client `client` in place of `msg`, which could not be sent
 * for `err` (see the top of this file); `ops` gives the op of a reply's
 * request.
 */
export function standInsFor(client: string, msg: unknown, err: unknown, ops: RequestOps): StandIns {
  if (typeof msg !== "object" || msg === null || standIns.has(msg)) return NONE;
  const out = messagesInPlaceOf(client, msg as { readonly op?: unknown }, err, ops);
  for (const m of out.messages) standIns.add(m);
  return out;
}

function messagesInPlaceOf(
  client: string,
  msg: { readonly op?: unknown },
  err: unknown,
  ops: RequestOps,
): StandIns {
  const why = unsentWhy(err);
  if (msg.op === "reply") {
    const { requestId } = msg as ReplyMsg;
    if (typeof requestId !== "number") return NONE;
    const op = ops.of(msg) ?? `request ${requestId}`;
    const reply: ReplyMsg = {
      op: "reply",
      requestId,
      error: `${op}: the scheduler cannot send its answer to client ${client}: ${why}`,
    };
    return { messages: [reply], whole: false };
  }
  if (typeof msg.op === "string" && ANSWER_OPS.has(msg.op)) {
    const { stimulusId, found, keys } = msg as {
      stimulusId?: unknown;
      found?: unknown;
      keys?: unknown;
    };
    if (typeof stimulusId !== "string") return NONE;
    const unsent: AnswerUnsentMsg = {
      op: "answer-unsent",
      answer: msg.op,
      error: `the scheduler cannot send its answer (${msg.op}) to client ${client}: ${why}`,
      // The client was made to want the keys of a dataset found: it lets go of them.
      ...(msg.op === "dataset" && found === true && Array.isArray(keys) ? { keys } : {}),
      stimulusId,
    };
    return { messages: [unsent], whole: false };
  }
  if (msg.op === "task-erred") {
    return { messages: [erredInPlaceOf(client, msg as ClientTaskErredMsg, why)], whole: false };
  }
  if (msg.op === "cancelled-keys" && err instanceof MessageTooLargeError) {
    const halves = keysInHalves(msg as CancelledKeysMsg);
    return { messages: halves, whole: halves.length > 0 };
  }
  return NONE;
}

/** A `task-erred` whose texts say that the error could not be sent whole, with its start. */
function erredInPlaceOf(client: string, msg: ClientTaskErredMsg, why: string): ClientTaskErredMsg {
  const { name, start } = errorStart(msg.exception, msg.exceptionText);
  const message = `the scheduler cannot send the error of task ${msg.blame} to client ${client} (${why}); it starts: ${start}`;
  return {
    op: "task-erred",
    key: msg.key,
    blame: msg.blame,
    exception: { name, message },
    traceback: null,
    exceptionText: `${name}: ${message}`,
    tracebackText: "",
    stimulusId: msg.stimulusId,
  };
}
