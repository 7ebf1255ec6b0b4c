/**
 * Requests a coordination primitive answers later (a lock's acquire, an
 * event's wait, a queue's get): each waits, in the order it came, until the
 * primitive answers it or its timeout passes, or until its client leaves.
 */

import { RemovableFifo } from "../../util/removableFifo.ts";

/** What a request handler returns when it will answer later. */
export const DEFERRED: unique symbol = Symbol("deferred");

/**
 * Sends the deferred answer of a client's request; false when it could not be sent (the
 * client's connection is gone), which a primitive handing over a value must know.
 */
export type Reply = (client: string, requestId: number, result: unknown) => boolean;

/** One request waiting. */
export interface Waiter<T> {
  /** The client that asked. */
  readonly client: string;
  /** The ID of its request, which the answer carries back. */
  readonly requestId: number;
  /** What the request asked, for the primitive. */
  readonly ask: T;
  /** The timeout's timer, or null when it waits as long as it takes. */
  timer: ReturnType<typeof setTimeout> | null;
}

/**
 * The requests waiting on one primitive, first come first served.
 *
 * A {@link RemovableFifo}, as a primitive may have many waiting (100,000 gets of
 * a queue): an array's `shift` moves every element left once it is long, and
 * handing over n items to n getters cost O(n²); a waiter that times out leaves
 * without a search.
 */
export class Waiters<T> {
  private readonly queue = new RemovableFifo<Waiter<T>>();

  constructor(private readonly reply: Reply) {}

  /** How many requests are waiting. */
  get size(): number {
    return this.queue.length;
  }

  /** The first waiter, if any. */
  peek(): Waiter<T> | undefined {
    return this.queue.peek();
  }

  /**
   * Add a waiter; with `timeoutMs` (null: forever), it is removed then and
   * answered `timedOut()` (called once it is removed, so that the primitive
   * may drop itself if nobody is left).
   */
  add(
    client: string,
    requestId: number,
    ask: T,
    timeoutMs: number | null,
    timedOut: () => unknown,
  ): void {
    const w: Waiter<T> = { client, requestId, ask, timer: null };
    const slot = this.queue.push(w);
    if (timeoutMs !== null) {
      w.timer = setTimeout(() => {
        w.timer = null;
        this.queue.remove(slot);
        this.reply(client, requestId, timedOut());
      }, timeoutMs);
      w.timer.unref();
    }
  }

  /**
   * Answer the first waiter with `result` and remove it: false when there was none, or
   * the answer could not be sent.
   */
  answerFirst(result: unknown): boolean {
    const w = this.queue.shift();
    if (w === undefined) return false;
    if (w.timer !== null) clearTimeout(w.timer);
    return this.reply(w.client, w.requestId, result);
  }

  /** Answer every waiter with `result`. */
  answerAll(result: unknown): void {
    while (this.size > 0) this.answerFirst(result);
  }

  /** Drop the waiters of a client that left (nobody is left to answer): what they asked. */
  dropClient(client: string): T[] {
    const dropped: T[] = [];
    for (const w of this.queue) {
      if (w.client !== client) continue;
      if (w.timer !== null) clearTimeout(w.timer);
      w.timer = null;
      dropped.push(w.ask);
    }
    if (dropped.length > 0) this.queue.retain((w) => w.client !== client);
    return dropped;
  }

  /** Drop every waiter, unanswered (the scheduler closing). */
  clear(): void {
    for (const w of this.queue) if (w.timer !== null) clearTimeout(w.timer);
    this.queue.clear();
  }
}
