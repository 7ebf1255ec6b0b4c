/**
 * Publish–subscribe by name (Dask's `Pub` and `Sub`, its `PubSubSchedulerExtension`):
 * a client, a task's among them, puts messages under a name, and the
 * scheduler sends each to every client subscribed to that name at the time,
 * nothing kept. In Dask, publishers on workers send to subscribers on workers
 * directly; here every message goes through the scheduler, so that one path
 * gives every subscriber, wherever it runs, the messages of each publisher in
 * the order they were put.
 *
 * Messages are opaque here: clients send them copied (structured-cloned), and
 * get them as the scheduler was sent them.
 */

/** A subscriber is sent a message: `(client id, name, msg)`. */
export type PubSubSink = (client: string, name: string, msg: unknown) => void;

/** The scheduler's subscriptions: the clients subscribed to each name. */
export class PubSubBroker {
  private readonly subscribers = new Map<string, Set<string>>();

  constructor(private readonly sink: PubSubSink) {}

  /** `client` is sent every message put under `name` from now on. */
  subscribe(name: string, client: string): void {
    let clients = this.subscribers.get(name);
    if (clients === undefined) this.subscribers.set(name, (clients = new Set()));
    clients.add(client);
  }

  /** `client` is sent no more messages put under `name`. */
  unsubscribe(name: string, client: string): void {
    const clients = this.subscribers.get(name);
    if (clients === undefined) return;
    clients.delete(client);
    if (clients.size === 0) this.subscribers.delete(name);
  }

  /** Send `msg` to the clients subscribed to `name` now: how many. */
  put(name: string, msg: unknown): number {
    const clients = this.subscribers.get(name);
    if (clients === undefined) return 0;
    for (const client of clients) this.sink(client, name, msg);
    return clients.size;
  }

  /** The clients subscribed to `name` now. */
  subscriberCount(name: string): number {
    return this.subscribers.get(name)?.size ?? 0;
  }

  /** A client left: it is subscribed to nothing any more. */
  clientLeft(client: string): void {
    for (const [name, clients] of this.subscribers) {
      clients.delete(client);
      if (clients.size === 0) this.subscribers.delete(name);
    }
  }
}
