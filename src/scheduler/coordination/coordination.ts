/**
 * The requests clients make of the scheduler's coordination primitives
 * (`Client.semaphore`, `lock`, `multiLock`, `event`, `variable`, `queue`;
 * Dask's `Semaphore`, `Lock`, `MultiLock`, `Event`, `Variable` and `Queue`):
 * each checked, then answered at once or later, when the primitive can (a
 * lease free, the event set, a value there) or the request's timeout passes.
 */

import type { CoordinationOp } from "../../protocol/messagesSession.ts";
import { MAX_TIMER_MS } from "../../util/timers.ts";
import { Events } from "./events.ts";
import { HeldDatasetOwners, isHeldDataset } from "./heldDatasets.ts";
import { type LeaseClock, leaseRefreshOf, MONOTONIC_CLOCK } from "./leases.ts";
import { MultiLocks } from "./multiLocks.ts";
import { Queues } from "./queues.ts";
import { Semaphores } from "./semaphores.ts";
import { Variables } from "./variables.ts";
import { DEFERRED, type Reply } from "./waiters.ts";

export { DEFERRED };

/** The ops of the coordination requests. */
export const COORDINATION_OPS: readonly CoordinationOp[] = [
  "semaphore-acquire",
  "semaphore-release",
  "semaphore-leases",
  "lock-acquire",
  "lock-release",
  "lock-leases",
  "event-set",
  "event-clear",
  "event-is-set",
  "event-wait",
  "variable-set",
  "variable-get",
  "variable-delete",
  "queue-put",
  "queue-get",
  "queue-get-batch",
  "queue-size",
  "multi-lock-acquire",
  "multi-lock-release",
  "lease-refresh",
];

/** Where the coordination primitives log what their clients should know of (a lease expired). */
export type CoordinationLog = (fields: Record<string, unknown>, msg: string) => void;

/** A lease that expired, as {@link Coordination.expireLeases} tells it. */
export interface ExpiredLease {
  /** Whose lease: a semaphore's, a lock's, or a multi-lock request's. */
  readonly kind: "semaphore" | "lock" | "multi-lock";
  /** The semaphore's or lock's name; a multi-lock's lock names. */
  readonly name: string | readonly string[];
  /** The lease, or the multi-lock request. */
  readonly lease: string;
  /** The client that held it. */
  readonly client: string;
  /** How long it went unrefreshed, in ms. */
  readonly idleMs: number;
}

/** null (wait as long as it takes) or milliseconds ≥ 0. */
function timeoutOf(msg: Record<string, unknown>): number | null {
  const t = msg.timeoutMs;
  if (t === null || t === undefined) return null;
  if (typeof t !== "number" || !(t >= 0 && t <= MAX_TIMER_MS)) {
    throw new TypeError(
      `${String(msg.op)}: timeoutMs must be null or a number of milliseconds ≥ 0`,
    );
  }
  return t;
}

function countOf(msg: Record<string, unknown>, field: string, min: number): number {
  const n = msg[field];
  if (!Number.isSafeInteger(n) || (n as number) < min) {
    throw new TypeError(`${String(msg.op)}: ${field} must be an integer ≥ ${min}`);
  }
  return n as number;
}

function nonEmptyString(msg: Record<string, unknown>, field: string): string {
  const v = msg[field];
  if (typeof v !== "string" || v === "") {
    throw new TypeError(`${String(msg.op)}: ${field} must be a non-empty string`);
  }
  return v;
}

function nameOf(msg: Record<string, unknown>): string {
  return nonEmptyString(msg, "name");
}

function leaseOf(msg: Record<string, unknown>): string {
  return nonEmptyString(msg, "lease");
}

function idOf(msg: Record<string, unknown>): string {
  return nonEmptyString(msg, "id");
}

/** A put's `held`: the dataset holding its value's futures, or null (absent: none). */
function heldOf(msg: Record<string, unknown>): string | null {
  if (msg.held === undefined || msg.held === null) return null;
  return nonEmptyString(msg, "held");
}

/** The lock names of a multi-lock request: a non-empty array of distinct non-empty strings. */
function namesOf(msg: Record<string, unknown>): string[] {
  const names = msg.names;
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    !names.every((n) => typeof n === "string" && n !== "") ||
    new Set(names).size !== names.length
  ) {
    throw new TypeError(
      `${String(msg.op)}: names must be a non-empty array of distinct non-empty strings`,
    );
  }
  return names as string[];
}

/** The scheduler server's coordination primitives. */
export class Coordination {
  /** The semaphores, by name. */
  readonly semaphores: Semaphores;
  /**
   * The locks, by name: semaphores of one lease, named apart from the
   * semaphores (as Dask's `LockExtension` keeps its locks), so that
   * `semaphore("x")` and `lock("x")` are two things.
   */
  readonly locks: Semaphores;
  /** The events, by name. */
  readonly events: Events;
  /** The variables, by name. */
  readonly variables: Variables;
  /** The queues, by name. */
  readonly queues: Queues;
  /** The multi-locks' locks, by name. */
  readonly multiLocks: MultiLocks;
  /** The datasets of values replaced or deleted since {@link takeDatasetsToLetGo}. */
  private datasetsToLetGo: string[] = [];
  /** Who is to let go of each held dataset no variable or queue holds (see `heldDatasets.ts`). */
  readonly heldOwners = new HeldDatasetOwners();

  constructor(
    reply: Reply,
    /** The clock leases are stamped with when granted and refreshed. */
    clock: LeaseClock = MONOTONIC_CLOCK,
    private readonly warn: CoordinationLog = () => {},
  ) {
    this.semaphores = new Semaphores(reply, clock);
    this.locks = new Semaphores(reply, clock);
    this.events = new Events(reply);
    this.variables = new Variables(reply);
    // Its clientLeft hands back the datasets of heldOwners too.
    this.queues = new Queues(reply, this.heldOwners);
    this.multiLocks = new MultiLocks(reply, clock);
  }

  /** The answer to `client`'s request `msg`, or {@link DEFERRED}. Throws for a malformed one. */
  answer(client: string, op: CoordinationOp, msg: Record<string, unknown>): unknown {
    const requestId = msg.requestId as number;
    switch (op) {
      case "semaphore-acquire":
        return this.semaphores.acquire(
          client,
          requestId,
          nameOf(msg),
          countOf(msg, "maxLeases", 1),
          leaseOf(msg),
          timeoutOf(msg),
        );
      case "semaphore-release":
        return this.released(client, "semaphore", nameOf(msg), leaseOf(msg));
      case "semaphore-leases":
        return this.semaphores.leases(nameOf(msg));
      case "lock-acquire":
        return this.locks.acquire(client, requestId, nameOf(msg), 1, leaseOf(msg), timeoutOf(msg));
      case "lock-release":
        return this.released(client, "lock", nameOf(msg), leaseOf(msg));
      case "lock-leases":
        return this.locks.leases(nameOf(msg));
      case "event-set":
        return this.events.set(nameOf(msg));
      case "event-clear":
        return this.events.clear(nameOf(msg));
      case "event-is-set":
        return this.events.isSet(nameOf(msg));
      case "event-wait":
        return this.events.wait(client, requestId, nameOf(msg), timeoutOf(msg));
      case "variable-set": {
        const held = heldOf(msg);
        this.letGo(this.variables.set(nameOf(msg), msg.value, held));
        // The variable's now, no longer its client's to let go.
        this.heldOwners.settled(held);
        return null;
      }
      case "variable-get":
        return this.variables.get(client, requestId, nameOf(msg), timeoutOf(msg));
      case "variable-delete":
        this.letGo(this.variables.delete(nameOf(msg)));
        return null;
      case "queue-put":
        return this.queues.put(
          client,
          requestId,
          nameOf(msg),
          countOf(msg, "maxsize", 0),
          msg.value,
          heldOf(msg),
          timeoutOf(msg),
        );
      case "queue-get":
        return this.queues.get(
          client,
          requestId,
          nameOf(msg),
          countOf(msg, "maxsize", 0),
          timeoutOf(msg),
        );
      case "queue-get-batch":
        return this.queues.getBatch(
          client,
          nameOf(msg),
          countOf(msg, "maxsize", 0),
          msg.n === null || msg.n === undefined ? null : countOf(msg, "n", 0),
        );
      case "queue-size":
        return this.queues.size(nameOf(msg));
      case "multi-lock-acquire": {
        const names = namesOf(msg);
        const numLocks = countOf(msg, "numLocks", 1);
        if (numLocks > names.length) {
          throw new TypeError(
            `multi-lock-acquire: numLocks must be at most the ${names.length} names`,
          );
        }
        return this.multiLocks.acquire(
          client,
          requestId,
          names,
          numLocks,
          idOf(msg),
          timeoutOf(msg),
        );
      }
      case "multi-lock-release": {
        const id = idOf(msg);
        const held = this.multiLocks.release(id);
        if (!held) this.releasedExpired(client, "multi-lock", null, id);
        return held;
      }
      case "lease-refresh":
        return this.refresh(client, msg);
    }
  }

  /**
   * Release `lease` of the semaphore or lock `name`: true; false, with a warning, for
   * a lease that had expired (Dask's scheduler only warns of it too).
   */
  private released(
    client: string,
    kind: "semaphore" | "lock",
    name: string,
    lease: string,
  ): boolean {
    const held = (kind === "lock" ? this.locks : this.semaphores).release(name, lease);
    if (!held) this.releasedExpired(client, kind, name, lease);
    return held;
  }

  private releasedExpired(client: string, kind: string, name: string | null, lease: string): void {
    this.warn(
      { client, kind, ...(name !== null ? { name } : {}), lease },
      "a client released a lease that had expired unrefreshed (its holder was not heard from within leaseTimeoutMs): another may have held it meanwhile",
    );
  }

  /** `client` refreshes the leases it holds: the answer lists those it no longer holds. */
  private refresh(client: string, msg: Record<string, unknown>): { gone: string[] } {
    const r = leaseRefreshOf(msg);
    const gone: string[] = [];
    for (const [name, ids] of r.semaphores) {
      gone.push(...this.semaphores.refresh(client, name, ids));
    }
    for (const [name, ids] of r.locks) {
      gone.push(...this.locks.refresh(client, name, ids));
    }
    gone.push(...this.multiLocks.refresh(client, r.multiLocks));
    return { gone };
  }

  /**
   * Release the leases (locks, multi-locks, semaphores) not refreshed within
   * `timeoutMs`, unless `alive` vouches for their client (a task's client whose
   * worker was heard from: see the scheduler), granting them to the next
   * waiters. What expired, for the scheduler to log.
   */
  expireLeases(timeoutMs: number, alive: (client: string) => boolean): ExpiredLease[] {
    const out: ExpiredLease[] = [];
    for (const e of this.semaphores.expire(timeoutMs, alive)) {
      out.push({
        kind: "semaphore",
        name: e.name,
        lease: e.lease,
        client: e.client,
        idleMs: e.idleMs,
      });
    }
    for (const e of this.locks.expire(timeoutMs, alive)) {
      out.push({ kind: "lock", name: e.name, lease: e.lease, client: e.client, idleMs: e.idleMs });
    }
    for (const e of this.multiLocks.expire(timeoutMs, alive)) {
      out.push({
        kind: "multi-lock",
        name: e.names,
        lease: e.id,
        client: e.client,
        idleMs: e.idleMs,
      });
    }
    return out;
  }

  /**
   * The datasets of the variables' values replaced or deleted by the requests
   * answered since the last call, for the server to unpublish: the scheduler
   * lets them go, not the client that asked, which may leave before its answer
   * comes (and then nobody would).
   */
  takeDatasetsToLetGo(): string[] {
    const names = this.datasetsToLetGo;
    if (names.length > 0) this.datasetsToLetGo = [];
    return names;
  }

  private letGo(dataset: string | null): void {
    if (dataset !== null) this.datasetsToLetGo.push(dataset);
  }

  /**
   * `client` published the dataset `name`: one holding the futures of a value it
   * is about to set or put is its to let go until a variable or queue takes it
   * (it may die first).
   */
  datasetPublished(name: string, client: string): void {
    if (isHeldDataset(name)) this.heldOwners.owe(name, client);
  }

  /**
   * The dataset `name` was unpublished: if it held the futures of a value
   * set or put, or of a queue's item taken, its client has let it go.
   */
  datasetGone(name: string): void {
    this.heldOwners.settled(name);
  }

  /**
   * A client left: its leases are released, its waiting requests dropped. The
   * datasets that held the futures of its dropped queue puts, of the values it
   * published for a set or put that never came, and of the queue items it took,
   * that it had not let go yet, to unpublish.
   */
  clientLeft(client: string): string[] {
    this.semaphores.clientLeft(client);
    this.locks.clientLeft(client);
    this.events.clientLeft(client);
    this.variables.clientLeft(client);
    const orphaned = this.queues.clientLeft(client);
    this.multiLocks.clientLeft(client);
    return orphaned;
  }

  /** The server closes: everything goes, no waiting request is answered. */
  dropAll(): void {
    this.semaphores.dropAll();
    this.locks.dropAll();
    this.events.dropAll();
    this.variables.dropAll();
    this.queues.dropAll();
    this.multiLocks.dropAll();
    this.datasetsToLetGo = [];
  }
}
