/**
 * Publish–subscribe by name, the client's side (Dask's `Pub` and `Sub`):
 * `client.pub(name).put(msg)` sends a message to every client subscribed to
 * `name` at the time, through the scheduler (`src/scheduler/pubsub.ts`);
 * `await client.sub(name)` subscribes, and its `get()` (or `for await`)
 * takes the messages in the order they came. Nothing is kept for later
 * subscribers: a message put while nobody listens is gone, as in Dask.
 *
 * Messages are copied as task values are (structured-cloned) when put, and
 * each `Sub` gets a copy of its own.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import type { PubSubRequestMsg } from "../protocol/messagesSession.ts";
import { Fifo } from "../util/fifo.ts";
import { showValue } from "../util/showValue.ts";
import { knownOptionsOf } from "./argChecks.ts";
import { type CoordinationWaitOptions, checkName, timedOut, timeoutOf } from "./coordination.ts";
import { SUB_OPTIONS } from "./optionNames.ts";
import { receivedCopy, wireCopy } from "./wireCopy.ts";

/** What the client does for its publishers and subscribers. */
export interface PubSubLink {
  /** Queue `pubsub-put` for the scheduler; throws once the client is closed. */
  send(name: string, msg: unknown): void;
  /** Ask the scheduler; rejects once the client is closed. */
  request(op: PubSubRequestMsg["op"], name: string): Promise<unknown>;
  /** Keep the process alive until the returned function is called: a `get` waits (see `LoopHold`). */
  holdLoop?(): () => void;
}

/**
 * A publisher (Dask's `Pub`): `put` sends a message to the clients subscribed
 * to its name now, each of their `Sub`s of the name getting it.
 */
export class Pub<T = unknown> {
  constructor(
    private readonly link: PubSubLink,
    /** The topic's name: its messages go to the `Sub`s of the same name. */
    readonly name: string,
  ) {
    checkName("pub", name);
  }

  /**
   * Send `msg` (copied now; a TypeError for a future or what cannot be
   * copied) to the subscribers of the name. It does not wait: the messages of
   * one publisher reach each subscriber in the order they were put, those
   * put before a subscription was made (its `client.sub` resolved) may not.
   */
  put(msg: T): void {
    this.link.send(this.name, wireCopy("Pub.put", msg, "a message"));
  }

  /** How many clients are subscribed to the name now. */
  async subscribers(): Promise<number> {
    return (await this.link.request("pubsub-subscribers", this.name)) as number;
  }
}

interface Waiter<T> {
  resolve(r: IteratorResult<T, undefined>): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout> | null;
}

/** Options of `client.sub`. */
export interface SubOptions {
  /**
   * Keep at most this many messages not taken yet: beyond it the oldest is
   * dropped (counted in {@link Sub.dropped}), so that a subscriber that reads
   * slower than its publishers does not fill its process's memory. Default
   * (or null): no bound.
   */
  readonly maxBuffered?: number | null;
}

/** `options.maxBuffered` checked: an integer ≥ 1, or Infinity. */
function maxBufferedOf(options: SubOptions | undefined): number {
  const n = knownOptionsOf("sub", options, SUB_OPTIONS).maxBuffered ?? Number.POSITIVE_INFINITY;
  if (!(n === Number.POSITIVE_INFINITY || (Number.isSafeInteger(n) && n >= 1))) {
    throw new TypeError(`sub: maxBuffered must be an integer ≥ 1, got ${showValue(n)}`);
  }
  return n;
}

/**
 * A subscriber (Dask's `Sub`), made by `client.sub(name)`: it keeps the
 * messages put under its name since it was made, until taken with `get` or
 * `for await (const msg of sub)`, which ends once the `Sub` is closed.
 */
export class Sub<T = unknown> implements AsyncIterable<T> {
  /**
   * The messages come and not taken, oldest first. A {@link Fifo}: it lets go of each
   * message as it is taken, where an array read through a head index, cut only once
   * emptied, kept every message taken by a reader that stayed behind.
   */
  private buffer = new Fifo<T>();
  private droppedCount = 0;
  private readonly waiters: Waiter<T>[] = [];
  private closedValue = false;
  private failure: Error | null = null;

  /**
   * Made by {@link PubSubSubscriptions.add}.
   * @internal
   */
  constructor(
    /** The topic's name. */
    readonly name: string,
    private readonly onClose: (sub: Sub<T>) => Promise<void>,
    /** At most this many messages are kept (see {@link SubOptions}). */
    readonly maxBuffered = Number.POSITIVE_INFINITY,
    /**
     * Told true when a `get` (or `for await`) starts waiting on this `Sub`, false
     * when none waits any more: the client holds it strongly meanwhile, its
     * subscriptions holding it only weakly otherwise (see {@link PubSubSubscriptions}).
     */
    private readonly onWaiting: (sub: Sub<T>, waiting: boolean) => void = () => {},
  ) {}

  /** The messages come and not taken yet. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** The messages dropped, the oldest first, because `maxBuffered` were waiting. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** True once closed (by {@link close}). */
  get closed(): boolean {
    return this.closedValue;
  }

  /**
   * The next message, once there is one: rejects with a
   * `CoordinationTimeoutError` if none came within `timeoutMs` (0: only one
   * come already), with an Error once the `Sub` is closed, and with the
   * client's error once it is closed and the messages come before are taken.
   */
  async get(options: CoordinationWaitOptions = {}): Promise<T> {
    const timeoutMs = timeoutOf("Sub.get", options);
    const r = await this.next(timeoutMs);
    if (r.done === true) throw this.closedError();
    return r.value;
  }

  /** The messages as they come (`for await`); ends once closed, and leaving the loop closes it. */
  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return {
      next: () => this.next(null),
      return: async () => {
        await this.close();
        return { done: true, value: undefined };
      },
    };
  }

  /** Stop: no more messages, those not taken dropped, the waiting `get`s rejected, `for await` loops ended. */
  async close(): Promise<void> {
    if (this.closedValue) return;
    this.closedValue = true;
    this.buffer = new Fifo();
    this.settleWaiters((w) => w.resolve({ done: true, value: undefined }));
    await this.onClose(this);
  }

  /**
   * A message came (the scheduler's copy: this `Sub` takes one of its own).
   * @internal
   */
  deliver(msg: unknown): void {
    if (this.closedValue || this.failure !== null) return;
    const value = receivedCopy(ClonedValue.unwrap(msg)) as T;
    const w = this.waiters.shift();
    if (w === undefined) {
      if (this.buffered >= this.maxBuffered) {
        this.buffer.shift(); // let it go now
        this.droppedCount++;
      }
      this.buffer.push(value);
      return;
    }
    if (w.timer !== null) clearTimeout(w.timer);
    if (this.waiters.length === 0) this.onWaiting(this, false);
    w.resolve({ done: false, value });
  }

  /**
   * The client closed: no more messages will come.
   * @internal
   */
  fail(err: Error): void {
    if (this.failure !== null) return;
    this.failure = err;
    this.settleWaiters((w) => w.reject(err));
  }

  /** End every wait with `settle`, no longer held for them. */
  private settleWaiters(settle: (w: Waiter<T>) => void): void {
    if (this.waiters.length === 0) return;
    for (const w of this.waiters.splice(0)) {
      if (w.timer !== null) clearTimeout(w.timer);
      settle(w);
    }
    this.onWaiting(this, false);
  }

  private next(timeoutMs: number | null): Promise<IteratorResult<T, undefined>> {
    if (this.buffer.length > 0) {
      return Promise.resolve({ done: false, value: this.buffer.shift() as T });
    }
    if (this.closedValue) return Promise.resolve({ done: true, value: undefined });
    if (this.failure !== null) return Promise.reject(this.failure);
    if (timeoutMs === 0) return Promise.reject(timedOut("Sub.get", this.name, timeoutMs));
    return new Promise((resolve, reject) => {
      const w: Waiter<T> = { resolve, reject, timer: null };
      if (timeoutMs !== null) {
        w.timer = setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          if (this.waiters.length === 0) this.onWaiting(this, false);
          reject(timedOut("Sub.get", this.name, timeoutMs));
        }, timeoutMs);
      }
      if (this.waiters.length === 0) this.onWaiting(this, true);
      this.waiters.push(w);
    });
  }

  private closedError(): Error {
    return new Error(`Sub.get ${JSON.stringify(this.name)}: the Sub is closed`);
  }
}

/**
 * A client's subscribers, by name: the scheduler is asked to subscribe the
 * client when its first `Sub` of a name is made, and to unsubscribe it when
 * the last is closed or collected.
 *
 * A `Sub` is held weakly, as Dask's client keeps its subscribers in a
 * `WeakSet`: one its code dropped without closing it (a task's, on a
 * long-lived worker's client) is collected and stops taking messages, instead
 * of buffering every message put under its name for the life of the client.
 * While a `get` or `for await` waits on it, it is held strongly: only that wait
 * may reach it then, and collected, the wait would never end.
 */
export class PubSubSubscriptions {
  private readonly byName = new Map<
    string,
    { readonly subs: Set<WeakRef<Sub<unknown>>>; readonly ready: Promise<unknown> }
  >();
  /** Each live `Sub`'s entry in its name's `subs`. */
  private readonly refs = new WeakMap<Sub<unknown>, WeakRef<Sub<unknown>>>();
  /** The `Sub`s a `get` or `for await` waits on. */
  private readonly waitedOn = new Set<Sub<unknown>>();
  /** What lets the process end again, for each `Sub` waited on (see `PubSubLink.holdLoop`). */
  private readonly loopHolds = new Map<Sub<unknown>, () => void>();
  private readonly collected = new FinalizationRegistry<{
    readonly name: string;
    readonly ref: WeakRef<Sub<unknown>>;
  }>(({ name, ref }) => this.forget(name, ref));

  constructor(readonly link: PubSubLink) {}

  /** A new `Sub` of `name`, once the scheduler sends the client the messages put under it. */
  async add<T>(name: string, options: SubOptions = {}): Promise<Sub<T>> {
    checkName("sub", name);
    const sub = new Sub<T>(
      name,
      (s) => this.remove(s as Sub<unknown>),
      maxBufferedOf(options),
      (s, waiting) => {
        const waited = s as Sub<unknown>;
        if (waiting) {
          this.waitedOn.add(waited);
          if (!this.loopHolds.has(waited)) {
            const release = this.link.holdLoop?.();
            if (release !== undefined) this.loopHolds.set(waited, release);
          }
        } else {
          this.waitedOn.delete(waited);
          this.loopHolds.get(waited)?.();
          this.loopHolds.delete(waited);
        }
      },
    );
    let entry = this.byName.get(name);
    if (entry === undefined) {
      entry = { subs: new Set(), ready: this.link.request("pubsub-subscribe", name) };
      this.byName.set(name, entry);
    }
    const ref = new WeakRef(sub as Sub<unknown>);
    this.refs.set(sub as Sub<unknown>, ref);
    entry.subs.add(ref);
    this.collected.register(sub, { name, ref }, ref);
    try {
      // A Sub made while the client's subscription is on its way waits for it too.
      await entry.ready;
    } catch (err) {
      this.collected.unregister(ref);
      entry.subs.delete(ref);
      if (entry.subs.size === 0 && this.byName.get(name) === entry) this.byName.delete(name);
      throw err;
    }
    return sub;
  }

  /** Hand a message put under `name` to each `Sub` of it. */
  deliver(name: string, msg: unknown): void {
    const entry = this.byName.get(name);
    if (entry === undefined) return;
    for (const ref of entry.subs) ref.deref()?.deliver(msg);
  }

  /** The client closed: every `Sub` gets `err` once its messages are taken. */
  failAll(err: Error): void {
    for (const { subs } of this.byName.values()) for (const ref of subs) ref.deref()?.fail(err);
    this.byName.clear();
  }

  private async remove(sub: Sub<unknown>): Promise<void> {
    const ref = this.refs.get(sub);
    if (ref === undefined) return;
    this.refs.delete(sub);
    this.collected.unregister(ref);
    await this.forget(sub.name, ref);
  }

  /** A `Sub` of `name` was closed or collected: unsubscribe once it was the last. */
  private async forget(name: string, ref: WeakRef<Sub<unknown>>): Promise<void> {
    const entry = this.byName.get(name);
    if (entry === undefined || !entry.subs.delete(ref) || entry.subs.size > 0) return;
    this.byName.delete(name);
    // Closed with its client: nothing left to tell.
    await this.link.request("pubsub-unsubscribe", name).catch(() => undefined);
  }
}
