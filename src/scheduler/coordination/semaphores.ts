/**
 * Semaphores the scheduler server keeps for clients (Dask's
 * `SemaphoreExtension`; the locks are semaphores of one lease, kept in
 * `Semaphores` of their own, apart from these): by name, created on
 * first use, dropped once no lease is held and nobody waits. A client's
 * leases are released when it leaves, and a lease not refreshed within the
 * scheduler's `leaseTimeoutMs` expires (Dask's `_check_lease_timeout`; see
 * `leases.ts`).
 */

import { type LeaseClock, MONOTONIC_CLOCK } from "./leases.ts";

import { CoordinationRefusal } from "./refusal.ts";
import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** The client holding a lease, and when it last refreshed it (the clock's ms). */
interface Holder {
  readonly client: string;
  refreshedAt: number;
}

/** A semaphore: at most `maxLeases` leases held at once, each by a client. */
export class Semaphores {
  private readonly byName = new Map<
    string,
    { maxLeases: number; holders: Map<string, Holder>; waiters: Waiters<string> }
  >();
  /**
   * The leases that expired, by lease, with their client, until it releases them
   * or leaves: their release is then not refused (see `expire`).
   */
  private readonly expired = new Map<string, string>();

  constructor(
    private readonly reply: Reply,
    private readonly clock: LeaseClock = MONOTONIC_CLOCK,
  ) {}

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
      s.holders.set(lease, { client, refreshedAt: this.clock.now() });
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

  /**
   * Give back `lease` of `name`, granting it to the next waiter; a refusal if it is not held.
   * A lease that expired is not refused (its holder could not have known, as in Dask, where
   * the scheduler only warns): false then, true otherwise.
   */
  release(name: string, lease: string): boolean {
    const s = this.byName.get(name);
    if (s === undefined || !s.holders.delete(lease)) {
      if (this.expired.delete(lease)) return false;
      throw new CoordinationRefusal(
        `lease ${lease} of ${JSON.stringify(name)} is not held (released already, or its client left)`,
      );
    }
    this.grant(name);
    return true;
  }

  /** The leases held. */
  leases(name: string): number {
    return this.byName.get(name)?.holders.size ?? 0;
  }

  /**
   * `client` still holds `leases` of `name`: they are refreshed. The leases it
   * does not hold (expired, or unknown), which are not taken again (Dask's
   * `refresh_leases` takes them, overbooking the semaphore).
   */
  refresh(client: string, name: string, leases: readonly string[]): string[] {
    const holders = this.byName.get(name)?.holders;
    const now = this.clock.now();
    const gone: string[] = [];
    for (const lease of leases) {
      const h = holders?.get(lease);
      if (h !== undefined && h.client === client) h.refreshedAt = now;
      else gone.push(lease);
    }
    return gone;
  }

  /**
   * Release the leases not refreshed within `timeoutMs`, unless `alive` vouches
   * for their client, granting them to the next waiters: what expired, to log.
   */
  expire(
    timeoutMs: number,
    alive: (client: string) => boolean,
  ): { name: string; lease: string; client: string; idleMs: number }[] {
    const now = this.clock.now();
    const out: { name: string; lease: string; client: string; idleMs: number }[] = [];
    for (const [name, s] of [...this.byName]) {
      let any = false;
      for (const [lease, h] of [...s.holders]) {
        const idleMs = now - h.refreshedAt;
        if (idleMs <= timeoutMs) continue;
        if (alive(h.client)) {
          h.refreshedAt = now;
          continue;
        }
        s.holders.delete(lease);
        this.expired.set(lease, h.client);
        out.push({ name, lease, client: h.client, idleMs });
        any = true;
      }
      if (any) this.grant(name);
    }
    return out;
  }

  /** A client left: its leases are released and its waiting requests dropped. */
  clientLeft(client: string): void {
    for (const [name, s] of [...this.byName]) {
      s.waiters.dropClient(client);
      for (const [lease, h] of [...s.holders]) if (h.client === client) s.holders.delete(lease);
      this.grant(name);
    }
    for (const [lease, c] of [...this.expired]) if (c === client) this.expired.delete(lease);
  }

  /** Forget every semaphore, leaving the waiting requests unanswered (the scheduler closing). */
  dropAll(): void {
    for (const s of this.byName.values()) s.waiters.clear();
    this.byName.clear();
    this.expired.clear();
  }

  private grant(name: string): void {
    const s = this.byName.get(name);
    if (s === undefined) return;
    for (
      let w = s.waiters.peek();
      w !== undefined && s.holders.size < s.maxLeases;
      w = s.waiters.peek()
    ) {
      s.holders.set(w.ask, { client: w.client, refreshedAt: this.clock.now() });
      s.waiters.answerFirst(true);
    }
    this.dropIfIdle(name);
  }

  private dropIfIdle(name: string): void {
    const s = this.byName.get(name);
    if (s !== undefined && s.holders.size === 0 && s.waiters.size === 0) this.byName.delete(name);
  }
}
