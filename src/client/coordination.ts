/**
 * Coordination primitives shared by clients and their tasks, kept by the
 * scheduler (Dask's `Semaphore`, `Lock`, `MultiLock`, `Event`, `Variable` and
 * `Queue`): made with `client.semaphore(name, …)`, `client.lock(name)`, … and found by
 * name, so that any client of the cluster, a task's (`getClient()`) among
 * them, uses the same one. Values of variables and queues are copied as task
 * arguments are; the futures in them (in arrays and plain objects, as
 * `gather` finds them) go through datasets of their own, hidden, whose keys
 * the scheduler holds until the value is replaced or taken (see
 * {@link HeldDatasets}).
 *
 * A client's leases are released when it leaves, its waiting calls dropped:
 * a task that dies holding a lock does not hold it for good, as long as its
 * client goes with it. And the client refreshes the leases it holds (see
 * {@link HeldLeases}): one not refreshed within the scheduler's
 * `leaseTimeoutMs` (a client frozen) expires, as Dask's do.
 */

import { randomUUID } from "node:crypto";
import { ClonedValue } from "../comm/clonedValue.ts";
import type { CoordinationOp } from "../protocol/messagesSession.ts";
import type { OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { checkOptionalBoolean, checkOptionalMs, knownOptionsOf } from "./argChecks.ts";
import { CoordinationTimeoutError, QueueItemsLostError } from "./errors.ts";
import { Future } from "./future.ts";
import { holdsFuture } from "./futureSearch.ts";
import { HeldLeases } from "./heldLeases.ts";
import { SendOrder } from "./sendOrder.ts";
import { dataCopy, receivedCopy } from "./wireCopy.ts";

/**
 * How a primitive asks the scheduler: the client's request, made by the
 * primitive's method `method` (e.g. `"Queue.get"`), which the scheduler's
 * refusal, a `SchedulerReplyError`, names.
 */
export type CoordinationRequest = (
  method: string,
  op: CoordinationOp,
  fields: Record<string, unknown>,
) => Promise<unknown>;

/** How long to wait: milliseconds; none (the default) waits as long as it takes. */
export interface CoordinationWaitOptions {
  /**
   * Give up after this many milliseconds. Default (or null, as Dask's
   * `timeout=None`, or `Infinity`): wait as long as it takes.
   */
  readonly timeoutMs?: number | null;
}

/** `name` if it is a non-empty string; a TypeError naming `what` otherwise. */
export function checkName(what: string, name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${what}: the name must be a non-empty string, got ${showValue(name)}`);
  }
  return name;
}

/** The options of a call that only waits: others are refused. */
const WAIT_OPTIONS: OptionNames<CoordinationWaitOptions> = { timeoutMs: true };

/** The options of `Lock.acquire`. */
const LOCK_OPTIONS: OptionNames<CoordinationWaitOptions & { blocking?: boolean }> = {
  timeoutMs: true,
  blocking: true,
};

/** The options of `MultiLock.acquire`. */
const MULTI_LOCK_OPTIONS: OptionNames<
  CoordinationWaitOptions & { blocking?: boolean; numLocks?: number | null }
> = { timeoutMs: true, blocking: true, numLocks: true };

/**
 * The wait `o` asks for: null for none given, or `Infinity` (as `wait()` and the
 * futures' timeouts take it); a TypeError naming `what` for a bad one, for
 * options that are not an object (`wait(5)` waited forever), or for a key not in
 * `known` (`{ timeout: 5 }` waited forever too).
 */
export function timeoutOf(
  what: string,
  o: CoordinationWaitOptions | undefined,
  known: OptionNames<CoordinationWaitOptions> = WAIT_OPTIONS,
): number | null {
  const t = knownOptionsOf(what, o, known).timeoutMs;
  if (t == null || t === Number.POSITIVE_INFINITY) return null;
  checkOptionalMs(what, "timeoutMs", t);
  return t as number;
}

/**
 * A TypeError naming `what` unless `blocking` is undefined or a boolean, or if
 * it is false beside a wait (`timeoutMs` above 0): one of the two would be
 * dropped without a word, as Dask's `Lock.acquire` refuses with a ValueError.
 */
function checkBlocking(what: string, blocking: unknown, waitFor: number | null | undefined): void {
  checkOptionalBoolean(what, "blocking", blocking);
  if (blocking === false && waitFor != null && waitFor > 0) {
    throw new TypeError(
      `${what}: blocking: false does not wait, so timeoutMs (${waitFor}) cannot be given with it`,
    );
  }
}

// The scheduler's too: it lets such a dataset go for a client that left before it could.
import { HELD_DATASET_PREFIX } from "../scheduler/coordination/heldDatasets.ts";

/** The names of the datasets that hold values of variables and queues (hidden from `listDatasets`). */
export { HELD_DATASET_PREFIX };

/**
 * Where the values of variables and queues that hold futures are kept: in
 * datasets of their own (named {@link HELD_DATASET_PREFIX}…), whose stand-in
 * clients hold the futures' keys on the scheduler, as Dask's variables and
 * queues hold theirs. The value itself then holds only the dataset's name.
 * A client getting the value gets the dataset, with futures of its own, as
 * `getDataset` does: their keys are held before the dataset can go.
 */
export interface HeldDatasets {
  /** Publish `value` under `name`; a TypeError (naming `what`) for a future that cannot be shared. */
  publish(what: string, name: string, value: unknown): Promise<void>;
  /** The value published under `name`, with futures of this client; null if there is none. */
  get(name: string): Promise<{ value: unknown } | null>;
  /** Forget the value published under `name`, letting its futures go. */
  unpublish(name: string): Promise<void>;
  /**
   * This client no longer has to let go of `name`: the set or put of the value
   * published under it is being sent (its variable or queue holds it from now
   * on; until then, a client closing lets it go, as nothing else would), or it
   * is gone.
   */
  disown(name: string): void;
  /**
   * This client is to let go of `name`, the dataset of a queue's item it took:
   * if it closes first, it lets it go as it closes.
   */
  owe(name: string): void;
}

/** What travels for a value: data, or the name of the dataset holding a value with futures. */
type Held = { readonly data: unknown } | { readonly dataset: string };

/**
 * `value` as it travels, copied now; a value with futures is published first,
 * in a dataset named after `owner`, whose name is returned to be let go if the
 * value is not kept.
 */
async function hold(
  what: string,
  owner: string,
  value: unknown,
  datasets: HeldDatasets,
): Promise<{ wire: ClonedValue; dataset: string | null }> {
  if (value instanceof Future) {
    throw new TypeError(
      `${what}: a future alone would be got as its result (futures are thenables): give [future] or { future }`,
    );
  }
  // Checked first without refusing cycles: a value without futures is data,
  // copied as the structured clone copies it; one with futures is a dataset's.
  if (holdsFuture(value, what)) {
    const dataset = `${HELD_DATASET_PREFIX}${owner}/${randomUUID()}`;
    await datasets.publish(what, dataset, value);
    const held: Held = { dataset };
    return { wire: new ClonedValue(held), dataset };
  }
  const held: Held = { data: dataCopy(what, value) };
  return { wire: new ClonedValue(held), dataset: null };
}

/** Leases that are never refreshed, for primitives made without a client's (they never expire then). */
function unrefreshed(): HeldLeases {
  return new HeldLeases(async () => ({ gone: [] }), null);
}

/** A value as the scheduler sent it; "malformed" if it is not one {@link hold} made. */
function heldOf(v: unknown): Held | "malformed" {
  const held = ClonedValue.unwrap(v);
  if (typeof held !== "object" || held === null) return "malformed";
  if ("data" in held) return held as Held;
  if ("dataset" in held && typeof held.dataset === "string") return held as Held;
  return "malformed";
}

/**
 * The value the scheduler sent, a copy of its own (in one process, the
 * scheduler's is shared), with futures of this client; `{lost}`, the name of
 * its dataset, if that is gone (the value was replaced or deleted since, or
 * the cluster restarted).
 */
async function unhold(
  what: string,
  v: unknown,
  datasets: HeldDatasets,
  take = false,
): Promise<{ value: unknown; dataset: string | null } | { lost: string }> {
  const held = heldOf(v);
  if (held === "malformed") throw new Error(`${what}: the scheduler sent a malformed value`);
  if ("data" in held) return { value: receivedCopy(held.data), dataset: null };
  // A queue item taken is this client's to let go of (a variable's value is not).
  if (take) datasets.owe(held.dataset);
  const got = await datasets.get(held.dataset);
  if (got !== null) return { value: got.value, dataset: held.dataset };
  if (take) datasets.disown(held.dataset);
  return { lost: held.dataset };
}

/** Why a value's futures are gone while it is still kept: its dataset went without it. */
const LOST_FUTURES = "the cluster restarted since it was set, or its dataset was removed";

/** The error of a wait on `name` that timed out. */
export function timedOut(
  what: string,
  name: string,
  timeoutMs: number | null,
): CoordinationTimeoutError {
  return new CoordinationTimeoutError(
    `${what} ${JSON.stringify(name)}: timed out after ${timeoutMs} ms`,
  );
}

function hasValue(r: unknown): r is { value: unknown } {
  return typeof r === "object" && r !== null && "value" in r;
}

/**
 * A semaphore (Dask's `Semaphore`): at most `maxLeases` leases held at once
 * across the cluster. Each `acquire` that succeeds takes one lease for this
 * object, which `release` gives back.
 */
export class Semaphore {
  private readonly held: string[] = [];

  constructor(
    private readonly request: CoordinationRequest,
    /** The semaphore's name: every `Semaphore` of that name on the cluster is the same one. */
    readonly name: string,
    /** The most leases held at once across the cluster. */
    readonly maxLeases: number,
    /** The client's leases, refreshed while held. */
    private readonly leases: HeldLeases = unrefreshed(),
  ) {
    checkName("semaphore", name);
    if (!Number.isSafeInteger(maxLeases) || maxLeases < 1) {
      throw new TypeError(
        `semaphore: maxLeases must be an integer ≥ 1, got ${showValue(maxLeases)}`,
      );
    }
  }

  /** Take a lease: true once taken, false if `timeoutMs` passed first (0: do not wait). */
  async acquire(options: CoordinationWaitOptions = {}): Promise<boolean> {
    const timeoutMs = timeoutOf("Semaphore.acquire", options);
    const lease = randomUUID();
    const got = await this.request("Semaphore.acquire", "semaphore-acquire", {
      name: this.name,
      maxLeases: this.maxLeases,
      lease,
      timeoutMs,
    });
    if (got === true) {
      this.held.push(lease);
      this.leases.add("semaphore", this.name, lease);
    }
    return got === true;
  }

  /**
   * Give back the last lease this object took. Rejects if it holds none. A lease
   * that expired meanwhile (not refreshed within the scheduler's
   * `leaseTimeoutMs`) is given back all the same, without an error, as in Dask.
   */
  async release(): Promise<void> {
    const lease = this.held.pop();
    if (lease === undefined) {
      throw new Error(`Semaphore.release: ${JSON.stringify(this.name)} holds no lease here`);
    }
    this.leases.remove(lease);
    await this.request("Semaphore.release", "semaphore-release", { name: this.name, lease });
  }

  /** The leases held now, across the cluster (Dask's `get_value`). */
  async getValue(): Promise<number> {
    return (await this.request("Semaphore.getValue", "semaphore-leases", {
      name: this.name,
    })) as number;
  }
}

/**
 * A lock (Dask's `Lock`): held by one `Lock` object at a time across the
 * cluster. Not reentrant: acquiring it again while this object holds it, or
 * is still acquiring it, is refused rather than left to deadlock (or to wait
 * or not depending on when the first acquire's answer came): give each
 * concurrent user a `Lock` of its own.
 */
export class Lock {
  /** The lease this object holds the lock by, while it holds it. */
  private lease: string | null = null;
  /** True while an acquire of this object waits for the scheduler's answer. */
  private acquiring = false;

  constructor(
    // Its own requests, not a Semaphore's: the scheduler's refusals name Lock's methods.
    private readonly request: CoordinationRequest,
    /** The lock's name: every `Lock` of that name on the cluster is the same lock. */
    readonly name: string,
    /** The client's leases, refreshed while held. */
    private readonly leases: HeldLeases = unrefreshed(),
  ) {
    checkName("lock", name);
  }

  /**
   * Take the lock: true once taken, false if `timeoutMs` passed first.
   * `blocking: false` does not wait (`timeoutMs` 0).
   */
  async acquire(
    options: CoordinationWaitOptions & { readonly blocking?: boolean } = {},
  ): Promise<boolean> {
    const waitFor = timeoutOf("Lock.acquire", options, LOCK_OPTIONS);
    checkBlocking("Lock.acquire", options.blocking, options.timeoutMs);
    if (this.lease !== null) {
      throw new Error(
        `Lock.acquire: this Lock holds ${JSON.stringify(this.name)} already (locks are not reentrant)`,
      );
    }
    // Refused as well, or whether a second acquire waits or is refused would
    // depend on whether the first one's answer came yet.
    if (this.acquiring) {
      throw new Error(
        `Lock.acquire: this Lock is acquiring ${JSON.stringify(this.name)} already (one holder a Lock: give each concurrent user a Lock of its own)`,
      );
    }
    const lease = randomUUID();
    this.acquiring = true;
    try {
      const got = await this.request("Lock.acquire", "lock-acquire", {
        name: this.name,
        lease,
        timeoutMs: options.blocking === false ? 0 : waitFor,
      });
      if (got === true) {
        this.lease = lease;
        this.leases.add("lock", this.name, lease);
      }
      return got === true;
    } finally {
      this.acquiring = false;
    }
  }

  /**
   * Let the lock go. Rejects if this object does not hold it. A lock whose
   * lease expired meanwhile (not refreshed within the scheduler's
   * `leaseTimeoutMs`: another may hold it now) is let go all the same, without
   * an error, as in Dask; the scheduler logs a warning.
   */
  async release(): Promise<void> {
    const lease = this.lease;
    if (lease === null) {
      throw new Error(`Lock.release: this Lock does not hold ${JSON.stringify(this.name)}`);
    }
    this.lease = null;
    this.leases.remove(lease);
    await this.request("Lock.release", "lock-release", { name: this.name, lease });
  }

  /** Whether some `Lock` of this name holds it now. */
  async locked(): Promise<boolean> {
    const leases = await this.request("Lock.locked", "lock-leases", { name: this.name });
    return (leases as number) > 0;
  }
}

/**
 * Several locks taken at once (Dask's `MultiLock`): `acquire` waits until
 * this object holds `numLocks` of its locks (all by default), taking none
 * until it can take that many; `release` lets them go. Its lock names are
 * apart from `Lock`'s. Not reentrant, as `Lock`.
 */
export class MultiLock {
  /** The names of its locks (shared with every `MultiLock` naming them, apart from `Lock`'s). */
  readonly names: readonly string[];
  /** The request holding the locks, while this object holds them. */
  private heldBy: string | null = null;
  /** True while an acquire of this object waits for the scheduler's answer. */
  private acquiring = false;

  constructor(
    private readonly request: CoordinationRequest,
    names: readonly string[],
    /** The client's leases, refreshed while held. */
    private readonly leases: HeldLeases = unrefreshed(),
  ) {
    if (!Array.isArray(names) || names.length === 0) {
      throw new TypeError(
        `multiLock: names must be a non-empty array of lock names, got ${showValue(names)}`,
      );
    }
    for (const name of names) checkName("multiLock", name);
    this.names = [...new Set(names)];
  }

  /**
   * Take `numLocks` of the locks (default: all): true once held, false if
   * `timeoutMs` passed first (`blocking: false`: do not wait). A waiting
   * acquire holds the locks whose turn came until it has them all, or gives
   * them back when it times out, so that two multi-locks never wait on each
   * other.
   */
  async acquire(
    options: CoordinationWaitOptions & {
      readonly blocking?: boolean;
      readonly numLocks?: number | null;
    } = {},
  ): Promise<boolean> {
    const waitFor = timeoutOf("MultiLock.acquire", options, MULTI_LOCK_OPTIONS);
    checkBlocking("MultiLock.acquire", options.blocking, options.timeoutMs);
    if (this.heldBy !== null) {
      throw new Error("MultiLock.acquire: this MultiLock holds its locks already (not reentrant)");
    }
    if (this.acquiring) {
      throw new Error(
        "MultiLock.acquire: this MultiLock is acquiring its locks already (one holder a MultiLock: give each concurrent user one of its own)",
      );
    }
    const numLocks = options.numLocks ?? this.names.length;
    if (!Number.isSafeInteger(numLocks) || numLocks < 1 || numLocks > this.names.length) {
      throw new TypeError(
        `MultiLock.acquire: numLocks must be an integer from 1 to ${this.names.length}, got ${showValue(numLocks)}`,
      );
    }
    const timeoutMs = options.blocking === false ? 0 : waitFor;
    const id = randomUUID();
    this.acquiring = true;
    try {
      const got = await this.request("MultiLock.acquire", "multi-lock-acquire", {
        names: this.names,
        numLocks,
        id,
        timeoutMs,
      });
      if (got === true) {
        this.heldBy = id;
        this.leases.add("multi-lock", "", id);
      }
      return got === true;
    } finally {
      this.acquiring = false;
    }
  }

  /**
   * Let the locks go. Rejects if this object does not hold them; locks whose
   * lease expired meanwhile are let go all the same, as `Lock.release`.
   */
  async release(): Promise<void> {
    const id = this.heldBy;
    if (id === null) throw new Error("MultiLock.release: this MultiLock does not hold its locks");
    this.heldBy = null;
    this.leases.remove(id);
    await this.request("MultiLock.release", "multi-lock-release", { id });
  }

  /**
   * Whether this object holds its locks now: false once the scheduler answered a
   * refresh that they expired (it still has to `release()` them to acquire again).
   */
  locked(): boolean {
    return this.heldBy !== null && !this.leases.hasExpired(this.heldBy);
  }
}

/** An event (Dask's `Event`): set or clear, with `wait` until it is set. */
export class Event {
  constructor(
    private readonly request: CoordinationRequest,
    /** The event's name: every `Event` of that name on the cluster is the same event. */
    readonly name: string,
  ) {
    checkName("event", name);
  }

  /** Set it: every `wait` resolves true, now and until it is cleared. */
  async set(): Promise<void> {
    await this.request("Event.set", "event-set", { name: this.name });
  }

  /** Clear it: `wait`s from now on wait until it is set again. */
  async clear(): Promise<void> {
    await this.request("Event.clear", "event-clear", { name: this.name });
  }

  /** Whether it is set now. */
  async isSet(): Promise<boolean> {
    return (await this.request("Event.isSet", "event-is-set", { name: this.name })) as boolean;
  }

  /** Wait until it is set: true then, false if `timeoutMs` passed first. */
  async wait(options: CoordinationWaitOptions = {}): Promise<boolean> {
    const timeoutMs = timeoutOf("Event.wait", options);
    const got = await this.request("Event.wait", "event-wait", { name: this.name, timeoutMs });
    return got === true;
  }
}

/**
 * A variable (Dask's `Variable`): a value that can be set, read and deleted.
 * The futures in it are held on the scheduler while it is set to that value.
 */
export class Variable<T = unknown> {
  constructor(
    private readonly request: CoordinationRequest,
    private readonly datasets: HeldDatasets,
    /** The variable's name: every `Variable` of that name on the cluster is the same one. */
    readonly name: string,
    /** The client's: its calls on this name are sent in the order they were made. */
    private readonly order: SendOrder = new SendOrder(),
  ) {
    checkName("variable", name);
  }

  /** Its calls' turns in {@link order}: apart from a queue's of the same name. */
  private get key(): string {
    return `variable/${this.name}`;
  }

  /**
   * Set the value (a copy is taken now); the `get`s waiting get it. Its
   * futures (of this client, not released) keep their keys held until the
   * variable is set again or deleted; a future alone cannot be the value (it
   * would be got as its result): give `[future]` or `{ future }`.
   */
  async set(value: T): Promise<void> {
    await this.order.inOrder(
      this.key,
      () => hold("Variable.set", `variable/${this.name}`, value, this.datasets),
      async ({ wire, dataset }) => {
        try {
          if (dataset !== null) this.datasets.disown(dataset);
          // The scheduler lets the replaced value's dataset go: this client may not be there to.
          await this.request("Variable.set", "variable-set", {
            name: this.name,
            value: wire,
            held: dataset,
          });
        } catch (err) {
          if (dataset !== null) await this.datasets.unpublish(dataset).catch(() => undefined);
          throw err;
        }
      },
    );
  }

  /**
   * The value, once there is one, with futures of this client in it: rejects
   * with a `CoordinationTimeoutError` if none was set within `timeoutMs`.
   */
  async get(options: CoordinationWaitOptions = {}): Promise<T> {
    const timeoutMs = timeoutOf("Variable.get", options);
    let lost: string | null = null;
    const ask = () => this.request("Variable.get", "variable-get", { name: this.name, timeoutMs });
    // The first ask in turn: it sees the sets and deletes made before it.
    let asking = this.order.inOrder(this.key, () => null, ask);
    for (; ; asking = ask()) {
      const r = await asking;
      if (!hasValue(r)) throw timedOut("Variable.get", this.name, timeoutMs);
      const got = await unhold("Variable.get", r.value, this.datasets);
      if (!("lost" in got)) return got.value as T;
      // Its dataset went as it was set again (or deleted): ask again. The same
      // value twice is still kept without its futures: asking again would only
      // get it again, at once and for ever.
      if (got.lost === lost) {
        throw new Error(
          `Variable.get ${JSON.stringify(this.name)}: the futures of its value were lost (${LOST_FUTURES}): set it again`,
        );
      }
      lost = got.lost;
    }
  }

  /** Remove the value, letting its futures go: a later `get` waits for another. */
  async delete(): Promise<void> {
    await this.order.inOrder(
      this.key,
      () => null,
      () => this.request("Variable.delete", "variable-delete", { name: this.name }),
    );
  }
}

/**
 * A queue (Dask's `Queue`): first in, first out, holding at most `maxsize`
 * items (0, the default: no bound). The futures in an item are held on the
 * scheduler until a `get` takes it.
 */
export class Queue<T = unknown> {
  constructor(
    private readonly request: CoordinationRequest,
    private readonly datasets: HeldDatasets,
    /** The queue's name: every `Queue` of that name on the cluster is the same queue. */
    readonly name: string,
    /** The most items it holds (a `put` waits while full); 0: no bound. */
    readonly maxsize = 0,
    /** The client's: its calls on this name are sent in the order they were made. */
    private readonly order: SendOrder = new SendOrder(),
  ) {
    checkName("queue", name);
    if (!Number.isSafeInteger(maxsize) || maxsize < 0) {
      throw new TypeError(`queue: maxsize must be an integer ≥ 0, got ${showValue(maxsize)}`);
    }
  }

  /**
   * Add a value (a copy is taken now), once there is room: rejects with a
   * `CoordinationTimeoutError` if there was none within `timeoutMs`. Futures
   * in it are held as a variable's are, until the item is taken.
   */
  async put(value: T, options: CoordinationWaitOptions = {}): Promise<void> {
    const timeoutMs = timeoutOf("Queue.put", options);
    const { r, dataset } = await this.order.inOrder(
      this.key,
      () => hold("Queue.put", `queue/${this.name}`, value, this.datasets),
      async ({ wire, dataset }) => {
        try {
          if (dataset !== null) this.datasets.disown(dataset);
          const r = await this.request("Queue.put", "queue-put", {
            name: this.name,
            maxsize: this.maxsize,
            value: wire,
            // Named, so that the scheduler lets it go if the put is dropped with this client.
            held: dataset,
            timeoutMs,
          });
          return { r, dataset };
        } catch (err) {
          if (dataset !== null) await this.datasets.unpublish(dataset).catch(() => undefined);
          throw err;
        }
      },
    );
    if (typeof r !== "object" || r === null || !("ok" in r)) {
      if (dataset !== null) await this.datasets.unpublish(dataset);
      throw new CoordinationTimeoutError(
        `Queue.put ${JSON.stringify(this.name)}: no room within ${timeoutMs} ms`,
      );
    }
  }

  /**
   * Take the first value, once there is one: rejects with a
   * `CoordinationTimeoutError` if there was none within `timeoutMs`.
   */
  async get(options: CoordinationWaitOptions = {}): Promise<T> {
    const timeoutMs = timeoutOf("Queue.get", options);
    const r = await this.order.inOrder(
      this.key,
      () => null,
      () =>
        this.request("Queue.get", "queue-get", {
          name: this.name,
          maxsize: this.maxsize,
          timeoutMs,
        }),
    );
    if (!hasValue(r)) throw timedOut("Queue.get", this.name, timeoutMs);
    const got = await this.take("Queue.get", r.value);
    if (got === null) {
      throw new Error(
        `Queue.get ${JSON.stringify(this.name)}: the futures of the item were lost (${LOST_FUTURES})`,
      );
    }
    return got.value as T;
  }

  /** Take up to `n` values (all without `n`) at once, without waiting: maybe none. */
  async getBatch(n?: number): Promise<T[]> {
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) {
      throw new TypeError(`Queue.getBatch: n must be an integer ≥ 0, got ${showValue(n)}`);
    }
    const r = await this.order.inOrder(
      this.key,
      () => null,
      () =>
        this.request("Queue.getBatch", "queue-get-batch", {
          name: this.name,
          maxsize: this.maxsize,
          n: n ?? null,
        }),
    );
    // Every item taken is off the queue: each is given, or counted lost, so that an
    // item whose futures were lost neither drops the others nor leaves their
    // datasets (and keys) held for good.
    const taken = r as unknown[];
    const out: T[] = [];
    for (const v of taken) {
      const got = await this.take("Queue.getBatch", v);
      if (got !== null) out.push(got.value as T);
    }
    if (out.length < taken.length) {
      throw new QueueItemsLostError(this.name, taken.length - out.length, taken.length, out);
    }
    return out;
  }

  /**
   * An item taken off the queue: its value, its dataset (if any) let go once
   * this client holds its futures; null if its futures were lost.
   */
  private async take(what: string, v: unknown): Promise<{ value: unknown } | null> {
    const got = await unhold(what, v, this.datasets, true);
    // Its dataset is gone: nothing holds its keys, nothing to let go.
    if ("lost" in got) return null;
    // Only the client taking an item lets its dataset go otherwise.
    if (got.dataset !== null) await this.datasets.unpublish(got.dataset);
    return { value: got.value };
  }

  /** The number of values in it now. */
  async qsize(): Promise<number> {
    return (await this.order.inOrder(
      this.key,
      () => null,
      () => this.request("Queue.qsize", "queue-size", { name: this.name }),
    )) as number;
  }

  /** Its calls' turns in {@link order}: apart from a variable's of the same name. */
  private get key(): string {
    return `queue/${this.name}`;
  }
}
