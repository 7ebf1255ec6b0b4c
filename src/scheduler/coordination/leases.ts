/**
 * Leases that expire unrefreshed (Dask's `lease-timeout`): the locks,
 * multi-locks and semaphore leases a client holds are refreshed by it every
 * {@link leaseRefreshIntervalMs} (see `client/heldLeases.ts`), and the
 * scheduler, looking every as often, releases those not refreshed within its
 * `leaseTimeoutMs`, granting them to the next waiters. A client that froze
 * (stopped, a VM paused, its event loop blocked) while holding a lock so loses
 * it, even though its connection stays open, as in Dask.
 */

/** The scheduler's clock of leases, in ms (injected, so that tests may move it). */
export interface LeaseClock {
  /** Now, in ms (only differences count). */
  now(): number;
}

/**
 * How often a client refreshes its leases, and the scheduler looks for expired
 * ones, in ms: a third of the lease timeout (Dask's `lease-validation-interval`,
 * 10 s, beside its 30 s `lease-timeout`), so that a refresh delayed by one
 * interval still comes in time; null when leases never expire.
 */
export function leaseRefreshIntervalMs(leaseTimeoutMs: number): number | null {
  if (!Number.isFinite(leaseTimeoutMs)) return null;
  return Math.max(1, leaseTimeoutMs / 3);
}

/**
 * A gap between two looks longer than this, in ms, means the scheduler's event
 * loop was blocked (a synchronous task of an inline worker of its process, a
 * machine suspended): the refreshes sent meanwhile are unread, so a lease's
 * silence is no evidence, and that look expires nothing.
 */
export function leaseBlockedGapMs(leaseTimeoutMs: number): number {
  return leaseTimeoutMs / 2;
}

/** The leases a client refreshes: by lock or semaphore name, and its multi-lock requests. */
export interface LeaseRefresh {
  /** The semaphore leases, by semaphore name. */
  readonly semaphores: ReadonlyMap<string, readonly string[]>;
  /** The lock leases, by lock name. */
  readonly locks: ReadonlyMap<string, readonly string[]>;
  /** The granted multi-lock requests, by id. */
  readonly multiLocks: readonly string[];
}

function idList(what: string, v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((id) => typeof id === "string" && id !== "")) {
    throw new TypeError(`lease-refresh: ${what} must be an array of non-empty strings`);
  }
  return v as string[];
}

/**
 * `[name, leases]` pairs, as a Map: the wire carries pairs, not an object keyed
 * by name, since a name may be `__proto__` (which msgpackr reads as
 * `__proto_`, and an object literal's assignment takes as its prototype) or
 * `constructor` (which a plain object already has).
 */
function byName(what: string, v: unknown): Map<string, string[]> {
  const pairs = `lease-refresh: ${what} must be an array of [name, lease ids] pairs`;
  if (!Array.isArray(v)) throw new TypeError(pairs);
  const out = new Map<string, string[]>();
  for (const pair of v) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
      throw new TypeError(pairs);
    }
    const [name, ids] = pair as [string, unknown];
    out.set(name, [...(out.get(name) ?? []), ...idList(`${what}[${name}]`, ids)]);
  }
  return out;
}

/** The refresh a `lease-refresh` request asks; a TypeError for a malformed one. */
export function leaseRefreshOf(msg: Record<string, unknown>): LeaseRefresh {
  return {
    semaphores: byName("semaphores", msg.semaphores ?? []),
    locks: byName("locks", msg.locks ?? []),
    multiLocks: idList("multiLocks", msg.multiLocks ?? []),
  };
}

/** The process's monotonic clock, in ms: the default {@link LeaseClock}. */
export const MONOTONIC_CLOCK: LeaseClock = { now: () => performance.now() };
