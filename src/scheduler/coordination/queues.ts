/**
 * Queues the scheduler server keeps for clients (Dask's `QueueExtension`,
 * for data): by name, first in first out, at most `maxsize` items (0: no
 * bound), with getters waiting while it is empty and putters while it is
 * full; dropped once empty with nobody waiting.
 *
 * The dataset holding an item's futures is the queue's while the item is in
 * it, then the taker's to let go once its own futures hold the keys (or the
 * putter's, if its put found no room in time). Until that client says it has
 * (by unpublishing it), the scheduler remembers whose it is: a client that
 * leaves first, its answer perhaps never read, would otherwise leave the keys
 * held for good.
 */

import { Fifo } from "../../util/fifo.ts";
import { HeldDatasetOwners } from "./heldDatasets.ts";
import { CoordinationRefusal } from "./refusal.ts";
import type { ValueOrTimeout } from "./variables.ts";
import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** What `queue-put` answers. */
export type PutOrTimeout = { readonly ok: true } | { readonly timedOut: true };

/** An item, or a put waiting for room: its value, and the dataset holding the value's futures (or null). */
interface Item {
  readonly value: unknown;
  readonly held: string | null;
}

interface Queue {
  readonly maxsize: number;
  /** A {@link Fifo}: an array's `shift` would move every item left at each get. */
  readonly items: Fifo<Item>;
  readonly getters: Waiters<null>;
  readonly putters: Waiters<Item>;
}

/** The queues, by name (see the module comment). */
export class Queues {
  private readonly byName = new Map<string, Queue>();

  constructor(
    private readonly reply: Reply,
    /**
     * Who is to let go of the datasets of items taken, and of puts that found no
     * room in time (shared with the variables: see `heldDatasets.ts`).
     */
    private readonly owners: HeldDatasetOwners = new HeldDatasetOwners(),
  ) {}

  /**
   * Put `value` into `name` (made with `maxsize` on first use; a refusal if it has another):
   * `{ok}`, or DEFERRED while full until there is room or `timeoutMs` passed (`{timedOut}`).
   * `held` names the dataset holding the value's futures (the client's `Queue.put`
   * publishes it first), which {@link clientLeft} hands back if the put is dropped.
   */
  put(
    client: string,
    requestId: number,
    name: string,
    maxsize: number,
    value: unknown,
    held: string | null,
    timeoutMs: number | null,
  ): PutOrTimeout | typeof DEFERRED {
    const q = this.queue(name, maxsize);
    // The queue's now, no longer its client's to let go.
    this.owners.settled(held);
    // Waiting getters mean an empty queue: straight to the first whose client can still
    // be answered. One whose connection is gone (its leaving not handled yet) would lose
    // the item.
    for (let first = q.getters.peek(); first !== undefined; first = q.getters.peek()) {
      if (q.getters.answerFirst({ value })) {
        this.taken(first.client, held);
        this.dropIfIdle(name);
        return { ok: true };
      }
    }
    if (q.maxsize === 0 || q.items.length < q.maxsize) {
      q.items.push({ value, held });
      return { ok: true };
    }
    if (timeoutMs === 0) return this.refused(client, held);
    q.putters.add(client, requestId, { value, held }, timeoutMs, () => this.refused(client, held));
    return DEFERRED;
  }

  /**
   * Take the oldest item of `name`: `{value}`, or DEFERRED while empty until one comes or
   * `timeoutMs` passed (`{timedOut}`).
   */
  get(
    client: string,
    requestId: number,
    name: string,
    maxsize: number,
    timeoutMs: number | null,
  ): ValueOrTimeout | typeof DEFERRED {
    const q = this.queue(name, maxsize);
    const item = q.items.shift();
    if (item !== undefined) {
      this.taken(client, item.held);
      this.admitPutters(name, q);
      return { value: item.value };
    }
    if (timeoutMs === 0) {
      this.dropIfIdle(name);
      return { timedOut: true };
    }
    q.getters.add(client, requestId, null, timeoutMs, () => {
      this.dropIfIdle(name);
      return { timedOut: true };
    });
    return DEFERRED;
  }

  /** Up to `n` items (all with null) at once, without waiting. */
  getBatch(client: string, name: string, maxsize: number, n: number | null): unknown[] {
    const q = this.byName.get(name);
    if (q === undefined) return [];
    this.checkMaxsize(name, q, maxsize);
    const out = q.items.take(n ?? q.items.length);
    for (const item of out) this.taken(client, item.held);
    this.admitPutters(name, q);
    return out.map((item) => item.value);
  }

  /**
   * The dataset `name` was unpublished (by its taker, once its futures hold
   * the keys; or by anyone): nobody has to let it go any more.
   */
  datasetGone(name: string): void {
    this.owners.settled(name);
  }

  /** How many items `name` holds. */
  size(name: string): number {
    return this.byName.get(name)?.items.length ?? 0;
  }

  /**
   * A client left: its waiting gets and puts are dropped (a dropped put's value
   * with it). The datasets holding the futures of the dropped values, of the
   * items it took and of its puts that found no room, which it had not let go
   * yet and nobody else would: the scheduler unpublishes them.
   */
  clientLeft(client: string): string[] {
    const orphaned = this.owners.clientLeft(client);
    for (const [name, q] of [...this.byName]) {
      q.getters.dropClient(client);
      for (const put of q.putters.dropClient(client)) {
        if (put.held !== null) orphaned.push(put.held);
      }
      this.dropIfIdle(name);
    }
    return orphaned;
  }

  /**
   * Forget every queue and its items, leaving the waiting requests unanswered (the scheduler
   * closing).
   */
  dropAll(): void {
    for (const q of this.byName.values()) {
      q.getters.clear();
      q.putters.clear();
    }
    this.byName.clear();
    this.owners.clear();
  }

  private queue(name: string, maxsize: number): Queue {
    let q = this.byName.get(name);
    if (q === undefined) {
      q = {
        maxsize,
        items: new Fifo(),
        getters: new Waiters(this.reply),
        putters: new Waiters(this.reply),
      };
      this.byName.set(name, q);
    }
    this.checkMaxsize(name, q, maxsize);
    return q;
  }

  private checkMaxsize(name: string, q: Queue, maxsize: number): void {
    if (q.maxsize !== maxsize) {
      throw new CoordinationRefusal(
        `queue ${JSON.stringify(name)} has maxsize ${q.maxsize}, not ${maxsize}`,
      );
    }
  }

  /** Room freed: the waiting putters' values go in, in order. */
  private admitPutters(name: string, q: Queue): void {
    for (
      let w = q.putters.peek();
      w !== undefined && (q.maxsize === 0 || q.items.length < q.maxsize);
      w = q.putters.peek()
    ) {
      q.items.push(w.ask);
      q.putters.answerFirst({ ok: true });
    }
    this.dropIfIdle(name);
  }

  private taken(client: string, held: string | null): void {
    this.owners.owe(held, client);
  }

  /**
   * A put that found no room in time: its client lets its value's dataset go once
   * told, and until it says it has, it is the client's as a taken item's is (one
   * that leaves first, the answer on its way, would leave it held for good).
   */
  private refused(client: string, held: string | null): PutOrTimeout {
    this.taken(client, held);
    return { timedOut: true };
  }

  private dropIfIdle(name: string): void {
    const q = this.byName.get(name);
    if (q !== undefined && q.items.length === 0 && q.getters.size === 0 && q.putters.size === 0) {
      this.byName.delete(name);
    }
  }
}
