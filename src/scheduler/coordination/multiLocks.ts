/**
 * Locks taken several at once (Dask's `MultiLockExtension`): a request names
 * locks and how many of them it needs, and waits in the queue of each; the
 * head of a lock's queue holds it. A request holding as many as it needs is
 * granted, all at once. Lock names here are apart from `Lock`'s.
 *
 * Unlike Dask's, a request granted leaves the queues of the locks it does not
 * hold: in Dask it stays in them, and takes each such lock too when it comes
 * to its turn, keeping it from others until it releases. And unlike Dask's,
 * whose multi-locks never expire, a granted request not refreshed within the
 * scheduler's `leaseTimeoutMs` expires as a lock's lease does (`leases.ts`).
 */

import { IdQueue } from "../../util/idQueue.ts";
import { type LeaseClock, MONOTONIC_CLOCK } from "./leases.ts";
import { CoordinationRefusal } from "./refusal.ts";
import { DEFERRED, type Reply } from "./waiters.ts";

interface Request {
  readonly client: string;
  readonly requestId: number;
  /** The locks whose queues it is in. */
  readonly names: Set<string>;
  /** How many more locks it needs; 0 once granted. */
  left: number;
  granted: boolean;
  /** When its client last refreshed it, once granted (the clock's ms). */
  refreshedAt: number;
  timer: ReturnType<typeof setTimeout> | null;
}

/** The scheduler server's multi-locks: a queue of request ids a lock name. */
export class MultiLocks {
  private readonly queues = new Map<string, IdQueue>();
  private readonly requests = new Map<string, Request>();
  /** The granted requests that expired, with their client, until it releases them or leaves. */
  private readonly expired = new Map<string, string>();

  constructor(
    private readonly reply: Reply,
    private readonly clock: LeaseClock = MONOTONIC_CLOCK,
  ) {}

  /**
   * Ask for `numLocks` of the locks `names` for the request `id` (a new one):
   * true at once if that many are free, else answered once they are (true) or
   * once `timeoutMs` has passed (false; 0: do not wait).
   */
  acquire(
    client: string,
    requestId: number,
    names: readonly string[],
    numLocks: number,
    id: string,
    timeoutMs: number | null,
  ): boolean | typeof DEFERRED {
    if (this.requests.has(id))
      throw new CoordinationRefusal(`multi-lock request ${id} exists already`);
    const r: Request = {
      client,
      requestId,
      names: new Set(),
      left: numLocks,
      granted: false,
      refreshedAt: 0,
      timer: null,
    };
    this.requests.set(id, r);
    // The shortest queues first, as Dask's: free locks are taken before any is waited for.
    const byQueue = [...names].sort(
      (a, b) => (this.queues.get(a)?.length ?? 0) - (this.queues.get(b)?.length ?? 0),
    );
    for (const name of byQueue) {
      let queue = this.queues.get(name);
      if (queue === undefined) this.queues.set(name, (queue = new IdQueue()));
      queue.push(id);
      r.names.add(name);
      if (queue.length === 1 && --r.left === 0) {
        this.grant(id, r);
        return true;
      }
    }
    if (timeoutMs === 0) {
      this.withdraw([id]);
      return false;
    }
    if (timeoutMs !== null) {
      r.timer = setTimeout(() => {
        r.timer = null;
        this.withdraw([id]);
        this.reply(client, requestId, false);
      }, timeoutMs);
      r.timer.unref();
    }
    return DEFERRED;
  }

  /**
   * Let go of the locks request `id` holds: true. Throws unless it holds them, or
   * held them until they expired (false then: its client could not have known).
   */
  release(id: string): boolean {
    if (this.requests.get(id)?.granted !== true) {
      if (this.expired.delete(id)) return false;
      throw new CoordinationRefusal(
        `multi-lock ${id} is not held (released already, or its client left)`,
      );
    }
    this.withdraw([id]);
    return true;
  }

  /** `client` still holds the requests `ids`: they are refreshed. Those it does not hold. */
  refresh(client: string, ids: readonly string[]): string[] {
    const now = this.clock.now();
    const gone: string[] = [];
    for (const id of ids) {
      const r = this.requests.get(id);
      if (r?.granted && r.client === client) r.refreshedAt = now;
      else gone.push(id);
    }
    return gone;
  }

  /**
   * Let go of the granted requests not refreshed within `timeoutMs`, unless
   * `alive` vouches for their client: what expired, to log.
   */
  expire(
    timeoutMs: number,
    alive: (client: string) => boolean,
  ): { id: string; names: string[]; client: string; idleMs: number }[] {
    const now = this.clock.now();
    const out: { id: string; names: string[]; client: string; idleMs: number }[] = [];
    for (const [id, r] of this.requests) {
      if (!r.granted) continue;
      const idleMs = now - r.refreshedAt;
      if (idleMs <= timeoutMs) continue;
      if (alive(r.client)) {
        r.refreshedAt = now;
        continue;
      }
      out.push({ id, names: [...r.names], client: r.client, idleMs });
    }
    for (const e of out) this.expired.set(e.id, e.client);
    // All at once, as a client leaving: one expired is never handed another's lock.
    this.withdraw(out.map((e) => e.id));
    return out;
  }

  /** A client left: its locks are released, its waiting requests dropped. */
  clientLeft(client: string): void {
    const ids: string[] = [];
    for (const [id, r] of this.requests) if (r.client === client) ids.push(id);
    // All at once: a request of the client is never handed a lock another of its requests let go.
    this.withdraw(ids);
    for (const [id, c] of [...this.expired]) if (c === client) this.expired.delete(id);
  }

  /** The server closes: everything goes, no waiting request is answered. */
  dropAll(): void {
    for (const r of this.requests.values()) if (r.timer !== null) clearTimeout(r.timer);
    this.requests.clear();
    this.queues.clear();
    this.expired.clear();
  }

  /**
   * Take the requests `ids` out of every queue they are in: each lock one of
   * them held goes to the next in its queue, which is granted once it holds
   * as many as it needs, and then passes on those it came to the head of
   * beyond that.
   */
  private withdraw(ids: readonly string[]): void {
    // The request counted as holding each lock touched: a new head takes it.
    const heldBy = new Map<string, string>();
    for (const id of ids) {
      const r = this.requests.get(id);
      if (r === undefined) continue;
      if (r.timer !== null) clearTimeout(r.timer);
      this.requests.delete(id);
      for (const name of r.names) {
        const queue = this.queues.get(name) as IdQueue;
        if (!heldBy.has(name)) heldBy.set(name, queue.first() as string);
        queue.remove(id);
      }
    }
    const granted: Request[] = [];
    const work = [...heldBy.keys()];
    for (let name = work.shift(); name !== undefined; name = work.shift()) {
      const queue = this.queues.get(name);
      if (queue === undefined) continue;
      if (queue.length === 0) {
        this.queues.delete(name);
        continue;
      }
      const head = queue.first() as string;
      if (heldBy.get(name) === head) continue;
      heldBy.set(name, head);
      const r = this.requests.get(head) as Request;
      if (--r.left > 0) continue;
      granted.push(r);
      // Out of the queues of the other locks, those it came to the head of but does not need included.
      r.granted = true;
      for (const other of [...r.names]) {
        const q = this.queues.get(other) as IdQueue;
        if (q.first() === head && (heldBy.get(other) ?? head) === head) continue;
        if (!heldBy.has(other)) heldBy.set(other, q.first() as string);
        q.remove(head);
        r.names.delete(other);
        work.push(other);
      }
    }
    const now = this.clock.now();
    for (const r of granted) {
      r.refreshedAt = now;
      if (r.timer !== null) clearTimeout(r.timer);
      r.timer = null;
      this.reply(r.client, r.requestId, true);
    }
  }

  /** Request `id` holds what it needs at once: it leaves the queues of the locks it does not hold. */
  private grant(id: string, r: Request): void {
    r.granted = true;
    r.refreshedAt = this.clock.now();
    for (const name of [...r.names]) {
      const queue = this.queues.get(name) as IdQueue;
      if (queue.first() === id) continue;
      queue.remove(id);
      r.names.delete(name);
    }
  }
}
