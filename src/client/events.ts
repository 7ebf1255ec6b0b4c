/**
 * Structured events by topic, the client's side (Dask's `log_event`,
 * `get_events`, `subscribe_topic`): the scheduler keeps each topic's last
 * events (`src/scheduler/events.ts`), and sends a subscribed client each new
 * one as it is logged. A message is copied as task values are
 * (structured-cloned) when logged and when got.
 */

import type { Logger } from "pino";
import { ClonedValue } from "../comm/clonedValue.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { showValue } from "../util/showValue.ts";
import { receivedCopy, wireCopy } from "./wireCopy.ts";

/** One event: when it was logged (wall-clock seconds) and its message (Dask's `(time, msg)`). */
export type ClusterEvent = readonly [time: number, msg: unknown];

/** Called with each event logged under a subscribed topic. */
export type EventHandler = (event: ClusterEvent) => void | Promise<void>;

/** The topics as an array; a TypeError naming `what` unless each is a non-empty string. */
export function topicsOf(what: string, topic: unknown): string[] {
  const topics = Array.isArray(topic) ? topic : [topic];
  if (topics.length === 0 || !topics.every((t) => typeof t === "string" && t !== "")) {
    throw new TypeError(
      `${what}: the topic must be a non-empty string or an array of them, got ${showValue(topic)}`,
    );
  }
  if (topics.includes("__proto__")) {
    throw new TypeError(`${what}: "__proto__" cannot be a topic (it names a prototype)`);
  }
  return topics as string[];
}

/** `msg` as it travels: copied now; a future is refused (it is the client's). */
export function encodeEventMessage(msg: unknown): ClonedValue {
  return wireCopy("logEvent", msg, "an event's message");
}

/** An event as the scheduler sent it, its message a copy of its own (in process the scheduler's is shared). */
export function decodeEvent(v: unknown): ClusterEvent {
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "number") {
    throw new Error("the scheduler sent a malformed event");
  }
  return [v[0], receivedCopy(ClonedValue.unwrap(v[1]))];
}

/** The client's subscriptions: a handler a topic (subscribing again replaces it, as in Dask). */
export class Subscriptions {
  private readonly handlers = new Map<string, EventHandler>();

  constructor(private readonly logger: Logger) {}

  set(topic: string, handler: EventHandler): void {
    this.handlers.set(topic, handler);
  }

  delete(topic: string): boolean {
    return this.handlers.delete(topic);
  }

  /** Hand `event` to the topic's handler; what it throws (or rejects with) is logged, not raised. */
  deliver(topic: string, event: unknown): void {
    const handler = this.handlers.get(topic);
    if (handler === undefined) return;
    const failed = (err: unknown) =>
      this.logger.error({ err, topic }, "an event handler failed (subscribeTopic)");
    // Any thenable's rejection, not only a Promise's: another's was lost.
    callGuarded(() => handler(decodeEvent(event)), failed);
  }
}
