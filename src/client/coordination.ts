/**
 * Coordination primitives shared by clients and their tasks, kept by the
 * scheduler (Dask's `Semaphore`, `Lock`, `Event`, `Variable` and `Queue`):
 * made with `client.semaphore(name, …)`, `client.lock(name)`, … and found by
 * name, so that any client of the cluster, a task's (`getClient()`) among
 * them, uses the same one. Values of variables and queues are data, copied
 * as task arguments are; futures are shared with `publishDataset`.
 *
 * A client's leases are released when it leaves, its waiting calls dropped:
 * a task that dies holding a lock does not hold it for good, as long as its
 * client goes with it.
 */

import { randomUUID } from "node:crypto";
import { ClonedValue } from "../comm/clonedValue.ts";
import type { CoordinationOp } from "../protocol/messagesSession.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { CoordinationTimeoutError } from "./errors.ts";
import { searchFutures } from "./futureSearch.ts";

/** How a primitive asks the scheduler: the client's request. */
export type CoordinationRequest = (
  op: CoordinationOp,
  fields: Record<string, unknown>,
) => Promise<unknown>;

/** How long to wait: milliseconds; none (the default) waits as long as it takes. */
export interface CoordinationWaitOptions {
  readonly timeoutMs?: number;
}

function checkName(what: string, name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${what}: the name must be a non-empty string, got ${String(name)}`);
  }
  return name;
}

function timeoutOf(what: string, o: CoordinationWaitOptions): number | null {
  const t = o.timeoutMs;
  if (t === undefined) return null;
  if (typeof t !== "number" || !(t >= 0 && t <= MAX_TIMER_MS)) {
    throw new TypeError(
      `${what}: timeoutMs must be a number of milliseconds ≥ 0, got ${String(t)}`,
    );
  }
  return t;
}

/** `value` as it travels: data only (no future), copied now. */
function encodeValue(what: string, value: unknown): ClonedValue {
  searchFutures(value, what, () => {
    throw new TypeError(
      `${what}: a future cannot be shared this way (futures are the client's): publish it with publishDataset`,
    );
  });
  try {
    return new ClonedValue(structuredClone(value));
  } catch (err) {
    throw new TypeError(
      `${what}: the value cannot be sent: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** A value as the scheduler sent it: a copy of its own (in one process, the scheduler's is shared). */
function decodeValue(v: unknown): unknown {
  return structuredClone(ClonedValue.unwrap(v));
}

function valueOrTimeout(what: string, name: string, timeoutMs: number | null, r: unknown): unknown {
  if (typeof r === "object" && r !== null && "value" in r) return decodeValue(r.value);
  throw new CoordinationTimeoutError(
    `${what} ${JSON.stringify(name)}: timed out after ${timeoutMs} ms`,
  );
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
    readonly name: string,
    readonly maxLeases: number,
  ) {
    checkName("semaphore", name);
    if (!Number.isSafeInteger(maxLeases) || maxLeases < 1) {
      throw new TypeError(`semaphore: maxLeases must be an integer ≥ 1, got ${String(maxLeases)}`);
    }
  }

  /** Take a lease: true once taken, false if `timeoutMs` passed first (0: do not wait). */
  async acquire(options: CoordinationWaitOptions = {}): Promise<boolean> {
    const timeoutMs = timeoutOf("Semaphore.acquire", options);
    const lease = randomUUID();
    const got = await this.request("semaphore-acquire", {
      name: this.name,
      maxLeases: this.maxLeases,
      lease,
      timeoutMs,
    });
    if (got === true) this.held.push(lease);
    return got === true;
  }

  /** Give back the last lease this object took. Rejects if it holds none. */
  async release(): Promise<void> {
    const lease = this.held.pop();
    if (lease === undefined) {
      throw new Error(`Semaphore.release: ${JSON.stringify(this.name)} holds no lease here`);
    }
    await this.request("semaphore-release", { name: this.name, lease });
  }

  /** The leases held now, across the cluster (Dask's `get_value`). */
  async getValue(): Promise<number> {
    return (await this.request("semaphore-leases", { name: this.name })) as number;
  }
}

/**
 * A lock (Dask's `Lock`): held by one `Lock` object at a time across the
 * cluster. Not reentrant: acquiring it again while this object holds it is
 * refused rather than left to deadlock.
 */
export class Lock {
  private readonly semaphore: Semaphore;
  private held = false;

  constructor(
    request: CoordinationRequest,
    readonly name: string,
  ) {
    checkName("lock", name);
    // Locks are named apart from semaphores.
    this.semaphore = new Semaphore(request, `lock:${name}`, 1);
  }

  /**
   * Take the lock: true once taken, false if `timeoutMs` passed first.
   * `blocking: false` does not wait (`timeoutMs` 0).
   */
  async acquire(
    options: CoordinationWaitOptions & { readonly blocking?: boolean } = {},
  ): Promise<boolean> {
    if (this.held) {
      throw new Error(
        `Lock.acquire: this Lock holds ${JSON.stringify(this.name)} already (locks are not reentrant)`,
      );
    }
    const got = await this.semaphore.acquire(
      options.blocking === false ? { timeoutMs: 0 } : options,
    );
    this.held = got;
    return got;
  }

  /** Let the lock go. Rejects if this object does not hold it. */
  async release(): Promise<void> {
    if (!this.held)
      throw new Error(`Lock.release: this Lock does not hold ${JSON.stringify(this.name)}`);
    this.held = false;
    await this.semaphore.release();
  }

  /** Whether some `Lock` of this name holds it now. */
  async locked(): Promise<boolean> {
    return (await this.semaphore.getValue()) > 0;
  }
}

/** An event (Dask's `Event`): set or clear, with `wait` until it is set. */
export class Event {
  constructor(
    private readonly request: CoordinationRequest,
    readonly name: string,
  ) {
    checkName("event", name);
  }

  /** Set it: every `wait` resolves true, now and until it is cleared. */
  async set(): Promise<void> {
    await this.request("event-set", { name: this.name });
  }

  async clear(): Promise<void> {
    await this.request("event-clear", { name: this.name });
  }

  async isSet(): Promise<boolean> {
    return (await this.request("event-is-set", { name: this.name })) as boolean;
  }

  /** Wait until it is set: true then, false if `timeoutMs` passed first. */
  async wait(options: CoordinationWaitOptions = {}): Promise<boolean> {
    const timeoutMs = timeoutOf("Event.wait", options);
    return (await this.request("event-wait", { name: this.name, timeoutMs })) === true;
  }
}

/** A variable (Dask's `Variable`, for data): a value that can be set, read and deleted. */
export class Variable<T = unknown> {
  constructor(
    private readonly request: CoordinationRequest,
    readonly name: string,
  ) {
    checkName("variable", name);
  }

  /** Set the value (a copy is taken now); the `get`s waiting get it. */
  async set(value: T): Promise<void> {
    const data = encodeValue("Variable.set", value);
    await this.request("variable-set", { name: this.name, value: data });
  }

  /**
   * The value, once there is one: rejects with a `CoordinationTimeoutError`
   * if none was set within `timeoutMs`.
   */
  async get(options: CoordinationWaitOptions = {}): Promise<T> {
    const timeoutMs = timeoutOf("Variable.get", options);
    const r = await this.request("variable-get", { name: this.name, timeoutMs });
    return valueOrTimeout("Variable.get", this.name, timeoutMs, r) as T;
  }

  /** Remove the value: a later `get` waits for another. */
  async delete(): Promise<void> {
    await this.request("variable-delete", { name: this.name });
  }
}

/**
 * A queue (Dask's `Queue`, for data): first in, first out, holding at most
 * `maxsize` items (0, the default: no bound).
 */
export class Queue<T = unknown> {
  constructor(
    private readonly request: CoordinationRequest,
    readonly name: string,
    readonly maxsize = 0,
  ) {
    checkName("queue", name);
    if (!Number.isSafeInteger(maxsize) || maxsize < 0) {
      throw new TypeError(`queue: maxsize must be an integer ≥ 0, got ${String(maxsize)}`);
    }
  }

  /**
   * Add a value (a copy is taken now), once there is room: rejects with a
   * `CoordinationTimeoutError` if there was none within `timeoutMs`.
   */
  async put(value: T, options: CoordinationWaitOptions = {}): Promise<void> {
    const timeoutMs = timeoutOf("Queue.put", options);
    const data = encodeValue("Queue.put", value);
    const r = await this.request("queue-put", {
      name: this.name,
      maxsize: this.maxsize,
      value: data,
      timeoutMs,
    });
    if (typeof r !== "object" || r === null || !("ok" in r)) {
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
    const r = await this.request("queue-get", {
      name: this.name,
      maxsize: this.maxsize,
      timeoutMs,
    });
    return valueOrTimeout("Queue.get", this.name, timeoutMs, r) as T;
  }

  /** Take up to `n` values (all without `n`) at once, without waiting: maybe none. */
  async getBatch(n?: number): Promise<T[]> {
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) {
      throw new TypeError(`Queue.getBatch: n must be an integer ≥ 0, got ${String(n)}`);
    }
    const r = await this.request("queue-get-batch", {
      name: this.name,
      maxsize: this.maxsize,
      n: n ?? null,
    });
    return (r as unknown[]).map(decodeValue) as T[];
  }

  /** The number of values in it now. */
  async qsize(): Promise<number> {
    return (await this.request("queue-size", { name: this.name })) as number;
  }
}
