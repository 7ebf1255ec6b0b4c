/**
 * Semaphores the scheduler server keeps for clients (Dask's
 * `SemaphoreExtension`; the locks are semaphores of one lease, kept in
 * `Semaphores` of their own, apart from these): by name, created on
 * first use, dropped once no lease is held and nobody waits. A client's
 * leases are released when it leaves.
 */

import { CoordinationRefusal } from "./refusal.ts";
import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** A semaphore: at most `maxLeases` leases held at once, each by a client. */
export class Semaphores {
  private readonly byName = new Map<
    string,
    { maxLeases: number; holders: Map<string, string>; waiters: Waiters<string> }
  >();

  constructor(private readonly reply: Reply) {}

  /**
   * Take `lease` of `name` (made with `maxLeases` on first use; a refusal if it has another): true,
   * or DEFERRED until a lease is free (true) or `timeoutMs` passed (false). Waiters are served in
   * order.
   */
  acquire(
    client: string,
    requestId: number,
    name: string,
    maxLeases: number,
    lease: string,
    timeoutMs: number | null,
  ): boolean | typeof DEFERRED {
    let s = this.byName.get(name);
    if (s === undefined) {
      s = { maxLeases, holders: new Map(), waiters: new Waiters(this.reply) };
      this.byName.set(name, s);
    }
    if (s.maxLeases !== maxLeases) {
      throw new CoordinationRefusal(
        `semaphore ${JSON.stringify(name)} has maxLeases ${s.maxLeases}, not ${maxLeases}`,
      );
    }
    if (s.holders.has(lease))
      throw new CoordinationRefusal(`lease ${lease} of ${JSON.stringify(name)} is held already`);
    if (s.holders.size < s.maxLeases && s.waiters.size === 0) {
      s.holders.set(lease, client);
      return true;
    }
    if (timeoutMs === 0) {
      this.dropIfIdle(name);
      return false;
    }
    s.waiters.add(client, requestId, lease, timeoutMs, () => {
      this.dropIfIdle(name);
      return false;
    });
    return DEFERRED;
  }

  /** Give back `lease` of `name`, granting it to the next waiter; a refusal if it is not held. */
  release(name: string, lease: string): null {
    const s = this.byName.get(name);
    if (s === undefined || !s.holders.delete(lease)) {
      throw new CoordinationRefusal(
        `lease ${lease} of ${JSON.stringify(name)} is not held (released already, or its client left)`,
      );
    }
    this.grant(name);
    return null;
  }

  /** The leases held. */
  leases(name: string): number {
    return this.byName.get(name)?.holders.size ?? 0;
  }

  /** A client left: its leases are released and its waiting requests dropped. */
  clientLeft(client: string): void {
    for (const [name, s] of [...this.byName]) {
      s.waiters.dropClient(client);
      for (const [lease, holder] of [...s.holders]) if (holder === client) s.holders.delete(lease);
      this.grant(name);
    }
  }

  /** Forget every semaphore, leaving the waiting requests unanswered (the scheduler closing). */
  dropAll(): void {
    for (const s of this.byName.values()) s.waiters.clear();
    this.byName.clear();
  }

  private grant(name: string): void {
    const s = this.byName.get(name);
    if (s === undefined) return;
    for (
      let w = s.waiters.peek();
      w !== undefined && s.holders.size < s.maxLeases;
      w = s.waiters.peek()
    ) {
      s.holders.set(w.ask, w.client);
      s.waiters.answerFirst(true);
    }
    this.dropIfIdle(name);
  }

  private dropIfIdle(name: string): void {
    const s = this.byName.get(name);
    if (s !== undefined && s.holders.size === 0 && s.waiters.size === 0) this.byName.delete(name);
  }
}
