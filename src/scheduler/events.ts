/**
 * Structured events by topic (Dask's `EventExtension` and its broker): any
 * client, a task's among them, logs `(time, msg)` under one or more topics
 * (`Client.logEvent`), reads a topic's last events (`getEvents`), and may
 * subscribe to a topic to be sent each new one as it is logged
 * (`subscribeTopic`). The scheduler logs its own under `all` and under each
 * worker's address: `{action: "add-worker" | "remove-worker", worker}`.
 *
 * Messages are opaque here: clients send them copied (structured-cloned), and
 * get them back as the scheduler keeps them.
 */

import { BoundedDeque } from "../util/boundedDeque.ts";
import { wallSeconds } from "../util/wallClock.ts";

/** The scheduler's own event of a worker joining or leaving, under `all` and the worker's address. */
export function logWorkerEvent(
  host: { readonly events: EventBroker },
  action: "add-worker" | "remove-worker",
  worker: string,
): void {
  host.events.log(["all", worker], { action, worker }, wallSeconds());
}

/** One event: wall-clock seconds, and the message. */
export type LoggedEvent = readonly [time: number, msg: unknown];

/** A subscriber is told of an event: `(client id, topic, event)`. */
export type EventSink = (client: string, topic: string, event: LoggedEvent) => void;

class Topic {
  readonly events: BoundedDeque<LoggedEvent>;
  /** Events ever logged, those dropped for length included. */
  count = 0;
  readonly subscribers = new Set<string>();
  constructor(maxlen: number) {
    this.events = new BoundedDeque(maxlen);
  }
}

/** The scheduler's topics; `maxlen` events kept a topic (Dask's `events-log-length`). */
export class EventBroker {
  private readonly topics = new Map<string, Topic>();
  /** Told of every event logged, after its subscribers (the scheduler's plugins). */
  onLog: ((topics: readonly string[], msg: unknown) => void) | null = null;

  constructor(
    private readonly maxlen: number,
    private readonly sink: EventSink,
  ) {}

  private topic(name: string): Topic {
    let t = this.topics.get(name);
    if (t === undefined) this.topics.set(name, (t = new Topic(this.maxlen)));
    return t;
  }

  /** Log `msg` at `time` under each of `topics`, and send it to their subscribers. */
  log(topics: readonly string[], msg: unknown, time: number): void {
    const event: LoggedEvent = [time, msg];
    for (const name of topics) {
      const t = this.topic(name);
      if (this.maxlen > 0) t.events.push(event);
      t.count++;
      for (const client of t.subscribers) this.sink(client, name, event);
    }
    this.onLog?.(topics, msg);
  }

  /** The events kept of `topic`, oldest first (none for a topic never logged to). */
  get(topic: string): LoggedEvent[] {
    return this.topics.get(topic)?.events.toArray() ?? [];
  }

  /**
   * The events kept of every topic logged to, by topic (in the order topics
   * were first used). Not a topic only subscribed to, as in Dask: every client
   * subscribes to `print` and `warn`, which would be listed, empty, everywhere.
   */
  all(): Record<string, LoggedEvent[]> {
    const out: Record<string, LoggedEvent[]> = {};
    for (const [name, t] of this.topics) if (t.count > 0) out[name] = t.events.toArray();
    return out;
  }

  /** How many topics are held, logged to or subscribed to: what subscriptions cost. */
  get topicCount(): number {
    return this.topics.size;
  }

  /** Send `client` each event logged under `topic` from now on. */
  subscribe(topic: string, client: string): void {
    this.topic(topic).subscribers.add(client);
  }

  /** Stop sending `client` the events of `topic`. */
  unsubscribe(topic: string, client: string): void {
    const t = this.topics.get(topic);
    if (t === undefined) return;
    t.subscribers.delete(client);
    this.dropIfUnused(topic, t);
  }

  /** A client left: it is subscribed to nothing any more. */
  clientLeft(client: string): void {
    for (const [name, t] of this.topics) {
      if (t.subscribers.delete(client)) this.dropIfUnused(name, t);
    }
  }

  /**
   * A topic made by a subscription alone, never logged to, goes with its last
   * subscriber: kept, every topic ever subscribed to stayed, one per name.
   */
  private dropIfUnused(name: string, t: Topic): void {
    if (t.subscribers.size === 0 && t.count === 0) this.topics.delete(name);
  }
}
