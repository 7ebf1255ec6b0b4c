/**
 * The leases a client holds (its `Lock`s, `MultiLock`s and `Semaphore`
 * leases), refreshed with the scheduler while held (Dask's `Semaphore`
 * refreshes its leases every `lease-validation-interval`): the scheduler
 * releases a lease not refreshed within its `leaseTimeoutMs`, so that a client
 * that froze holding a lock does not keep it from everyone (see
 * `scheduler/coordination/leases.ts`).
 *
 * One timer a client, for all its leases in one request, running only while
 * it holds some, and unref'd: it keeps no process alive. A lease the scheduler
 * answers is no longer held (expired) is noted as such and no longer refreshed.
 */

import { leaseRefreshIntervalMs } from "../scheduler/coordination/leases.ts";

/** What kind of lease: a semaphore's or a lock's (by name), or a multi-lock request's. */
export type LeaseKind = "semaphore" | "lock" | "multi-lock";

/** Sends a `lease-refresh` request; resolves with the scheduler's answer. */
export type SendRefresh = (fields: Record<string, unknown>) => Promise<unknown>;

/** The leases a client holds, refreshed every third of the scheduler's lease timeout. */
export class HeldLeases {
  /** The leases held, by id: their kind and name (a multi-lock's: ""). */
  private readonly held = new Map<string, { kind: LeaseKind; name: string }>();
  /** The leases the scheduler said expired, until given back. */
  private readonly expired = new Set<string>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private readonly intervalMs: number | null;

  constructor(
    private readonly send: SendRefresh,
    /** The scheduler's `leaseTimeoutMs`; null: leases never expire, nothing to refresh. */
    leaseTimeoutMs: number | null,
  ) {
    this.intervalMs = leaseTimeoutMs === null ? null : leaseRefreshIntervalMs(leaseTimeoutMs);
  }

  /** The lease `id` of `name` (of a `kind`) is held from now on. */
  add(kind: LeaseKind, name: string, id: string): void {
    if (this.stopped) return;
    this.held.set(id, { kind, name });
    if (this.timer === null && this.intervalMs !== null) {
      this.timer = setInterval(() => this.refresh(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** The lease `id` is given back (or was never held): no longer refreshed. */
  remove(id: string): void {
    this.held.delete(id);
    this.expired.delete(id);
    if (this.held.size === 0) this.clearTimer();
  }

  /** Whether the scheduler said the lease `id` expired (its client was not heard from in time). */
  hasExpired(id: string): boolean {
    return this.expired.has(id);
  }

  /** The client closed: nothing more is refreshed. */
  stop(): void {
    this.stopped = true;
    this.held.clear();
    this.clearTimer();
  }

  /** Refresh every lease held, in one request (also run by the timer). */
  async refresh(): Promise<void> {
    if (this.held.size === 0) return;
    // By name in Maps, sent as pairs: a lock may be named `__proto__` or `constructor`.
    const semaphores = new Map<string, string[]>();
    const locks = new Map<string, string[]>();
    const multiLocks: string[] = [];
    for (const [id, { kind, name }] of this.held) {
      if (kind === "multi-lock") {
        multiLocks.push(id);
        continue;
      }
      const byName = kind === "lock" ? locks : semaphores;
      const ids = byName.get(name);
      if (ids === undefined) byName.set(name, [id]);
      else ids.push(id);
    }
    let answer: unknown;
    try {
      answer = await this.send({ semaphores: [...semaphores], locks: [...locks], multiLocks });
    } catch {
      return; // the client closed, or lost its scheduler: its leases went with it
    }
    const gone = (answer as { gone?: unknown } | null)?.gone;
    if (!Array.isArray(gone)) return;
    for (const id of gone) {
      if (typeof id !== "string" || !this.held.delete(id)) continue;
      this.expired.add(id);
    }
    if (this.held.size === 0) this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
