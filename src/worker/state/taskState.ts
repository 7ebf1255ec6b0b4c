import { keySplit } from "../../util/keySplit.ts";
import type { Priority } from "../../util/priority.ts";
import { pyKeyRepr } from "../../util/pyString.ts";

/** A task's state on a worker. Not to be confused with the scheduler's task states. */
export type TaskStateState =
  | "cancelled"
  | "constrained"
  | "error"
  | "executing"
  | "fetch"
  | "flight"
  | "forgotten"
  | "long-running"
  | "memory"
  | "missing"
  | "ready"
  | "released"
  | "rescheduled"
  | "resumed"
  | "waiting";

/** Every state, in the seed's order. */
export const TASK_STATES: readonly TaskStateState[] = [
  "cancelled",
  "constrained",
  "error",
  "executing",
  "fetch",
  "flight",
  "forgotten",
  "long-running",
  "memory",
  "missing",
  "ready",
  "released",
  "rescheduled",
  "resumed",
  "waiting",
];

/**
 * The position of `state` in {@link TASK_STATES}, or NaN for a string that is not a
 * state. A switch, not a lookup in an object keyed by state: such a lookup sees 15
 * property names at one site, and V8 then resolves each one in its megamorphic cache
 * (2.5% of the `independent` benchmark replay, where every transition took four).
 * The common states come first.
 */
export function stateIndex(state: TaskStateState): number {
  switch (state) {
    case "released":
      return 11;
    case "waiting":
      return 14;
    case "ready":
      return 10;
    case "executing":
      return 3;
    case "memory":
      return 8;
    case "forgotten":
      return 6;
    case "fetch":
      return 4;
    case "flight":
      return 5;
    case "constrained":
      return 1;
    case "cancelled":
      return 0;
    case "resumed":
      return 13;
    case "error":
      return 2;
    case "missing":
      return 9;
    case "long-running":
      return 7;
    case "rescheduled":
      return 12;
    default:
      return Number.NaN;
  }
}

/** States in which the worker is responsible for computing the task. */
export const PROCESSING: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "waiting",
  "ready",
  "constrained",
  "executing",
  "long-running",
]);

/** States of a task queued for a thread. */
export const READY: ReadonlySet<TaskStateState> = new Set<TaskStateState>(["ready", "constrained"]);

/** Valid states for a task that is found in `TaskState.waitingForData`. */
export const WAITING_FOR_DATA: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "constrained",
  "executing",
  "fetch",
  "flight",
  "long-running",
  "missing",
  "ready",
  "resumed",
  "waiting",
]);

/** `run_id` of a task the scheduler never asked this worker to compute. */
export const RUN_ID_SENTINEL = -1;

/**
 * Size assumed for a value whose size is unknown
 * (Dask's `distributed.scheduler.default-data-size`, 1 kiB).
 */
export const DEFAULT_DATA_SIZE = 1024;

/** One record of `TaskState.startstops`. */
export interface StartStop {
  /**
   * What was timed (the seed's actions): running the task, fetching from a peer, spilling,
   * unspilling or deserialising.
   */
  action: "compute" | "transfer" | "disk-read" | "disk-write" | "deserialize";
  /** When it started: wall-clock seconds since the epoch, as the seed's `time()`. */
  start: number;
  /** When it stopped: wall-clock seconds since the epoch. */
  stop: number;
  /** For a `transfer`, the address of the peer the data came from. */
  source?: string;
}

/**
 * What the scheduler sent to run a task (the seed's `SerializedTask`): either a
 * `(function, args, kwargs)` triple or a `task`. The state machine never looks inside
 * it; the worker shell does. A task that has one is a task to compute here, even when
 * its content is null (a replayed recording strips it).
 */
export class SerializedTask {
  constructor(
    /** The task as one opaque object; null when the triple is given instead. */
    readonly task: unknown = null,
    /** The function (the seed's `function`); null when `task` is given instead. */
    readonly fn: unknown = null,
    /** The positional arguments of `fn`, or null. */
    readonly args: unknown = null,
    /** The keyword arguments of `fn`, or null. */
    readonly kwargs: unknown = null,
  ) {}
}

/** A shared empty set that refuses additions: adding to it would be a bug. */
class SharedEmptySet<T> extends Set<T> {
  override add(_value: T): this {
    throw new Error("internal error: add() on the shared empty set; use the TaskState methods");
  }
}

/**
 * A set of one worker shared by every task that worker alone holds (most inputs have
 * one replica): `whoHas` is replaced, never changed in place, so one set per peer
 * serves them all instead of a hash table per task. It refuses changes;
 * {@link withoutHolder} replaces it.
 */
export class SharedHolders extends Set<string> {
  constructor(worker: string) {
    super();
    super.add(worker);
  }
  override add(_value: string): this {
    throw new Error("internal error: add() on a shared set of holders; assign a new set");
  }
  override delete(_value: string): boolean {
    throw new Error("internal error: delete() on a shared set of holders; use withoutHolder");
  }
  /** Throws: a shared set is replaced, never cleared. */
  override clear(): void {
    throw new Error("internal error: clear() on a shared set of holders; assign a new set");
  }
}

/** `whoHas` without `worker`, to assign back to the field (a shared set is replaced). */
export function withoutHolder(whoHas: Set<string>, worker: string): Set<string> {
  if (whoHas instanceof SharedHolders) return whoHas.has(worker) ? NO_WORKERS : whoHas;
  whoHas.delete(worker);
  return whoHas;
}

/** The empty set of tasks every task starts with. */
export const NO_TASKS: Set<TaskState> = new SharedEmptySet<TaskState>();
/** The empty set of workers every task starts with. */
export const NO_WORKERS: Set<string> = new SharedEmptySet<string>();

/**
 * `set` without `ts`, to assign back to the field: {@link NO_TASKS} once the
 * last element goes. V8 reallocates a `Set`'s table when it empties, and a
 * task's sets (most hold one or two tasks) empty one element at a time.
 */
export function withoutTask(set: Set<TaskState>, ts: TaskState): Set<TaskState> {
  if (set.size <= 1) return set.size === 1 && set.has(ts) ? NO_TASKS : set;
  set.delete(ts);
  return set;
}
const NO_STARTSTOPS: readonly StartStop[] = Object.freeze([]);
const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The fields of a task that most tasks never set away from their defaults (states
 * only cancelled and resumed tasks have, errors, resources, plugins' metadata, span
 * ids, the run times the state machine never sets), apart from the task's own object:
 * a task waiting in a queue is copied by V8's young-generation collector, and the
 * task's object is 88 bytes smaller without them (twelve fields out, one pointer in).
 */
class TaskStateExtras {
  previous: "executing" | "long-running" | "flight" | null = null;
  next: "fetch" | "waiting" | null = null;
  resourceRestrictions: ReadonlyMap<string, number> = EMPTY_RESOURCES;
  exception: unknown = null;
  traceback: unknown = null;
  exceptionText = "";
  tracebackText = "";
  suspiciousCount = 0;
  metadata: Readonly<Record<string, unknown>> = NO_METADATA;
  spanId: string | null = null;
  startTime: number | null = null;
  stopTime: number | null = null;
}

/** Holds volatile state relating to an individual task on a worker. */
export class TaskState {
  /** Task key. */
  readonly key: string;
  /** Task run ID. */
  runId = RUN_ID_SENTINEL;
  /** What to run; null when the task is a dependency fetched from a peer. */
  runSpec: SerializedTask | null = null;
  // The sets below start as one shared empty set and get their own on the first add
  // (through the methods below): most tasks never need some of them, and a million
  // tasks would otherwise carry five empty hash tables each.
  /** The data needed by this key to run. */
  dependencies: Set<TaskState> = NO_TASKS;
  /** The keys that use this dependency. */
  dependents: Set<TaskState> = NO_TASKS;
  /** Subset of dependencies that are not in memory. */
  waitingForData: Set<TaskState> = NO_TASKS;
  /** Subset of dependents that are not in memory. */
  waiters: Set<TaskState> = NO_TASKS;
  /** The current state of the task. */
  state: TaskStateState = "released";
  /** Expected duration of the task. */
  duration: number | null = null;
  /** The priority this task was given by the scheduler; determines run order. */
  priority: Priority | null = null;
  /** Addresses of workers that we believe have this data (replaced, never added to). */
  whoHas: Set<string> = NO_WORKERS;
  /** The worker that the task's data is coming from while in flight. */
  comingFrom: string | null = null;
  /** Type name of the value in memory. */
  type: string | null = null;
  /** Log of transfer, load and compute times. */
  startstops: readonly StartStop[] = NO_STARTSTOPS;
  /** The size of the value of the task, if in memory. */
  nbytes: number | null = null;
  /** Arbitrary task annotations. */
  annotations: Record<string, unknown> | null = null;
  /**
   * True if the execute or gather_dep servicing this task completed. Changes the
   * behaviour of transitions out of executing, flight etc.
   */
  done = false;
  /** Stimulus in which the task was last touched (bookkeeping of `WorkerState.transitions`). */
  touchedEpoch = 0;
  /** Which of the worker's `ready` and `constrained` heaps hold this task (one bit each). */
  heapMarks = 0;
  /** Whether the TaskCounter counts this task yet (bookkeeping of `TaskCounter`). */
  counted = false;
  /** The TaskCounter's row for this task's prefix while it counts the task (its bookkeeping). */
  counterRow: Float64Array | null = null;

  /** The fields below that most tasks leave at their defaults; null while all are. */
  private extras: TaskStateExtras | null = null;

  constructor(key: string) {
    this.key = key;
  }

  /**
   * Task prefix (leftmost part of the key), computed when read rather than kept: the
   * task counter reads it once per task (and then keeps the prefix's row on the task),
   * so a string per task would outlive its use.
   */
  get prefix(): string {
    return keySplit(this.key);
  }

  /** `extras`, made on the first field set away from its default. */
  private ownExtras(): TaskStateExtras {
    let x = this.extras;
    if (x === null) {
      x = new TaskStateExtras();
      this.extras = x;
    }
    return x;
  }

  // The seldom-used fields live in `extras` (see TaskStateExtras); a setter that is given
  // the default while there is none keeps it so.

  /** The previous state; not null iff `state` is cancelled or resumed. */
  get previous(): "executing" | "long-running" | "flight" | null {
    const x = this.extras;
    return x === null ? null : x.previous;
  }
  set previous(v: "executing" | "long-running" | "flight" | null) {
    if (v !== null || this.extras !== null) this.ownExtras().previous = v;
  }

  /** The next state; not null iff `state` is resumed. */
  get next(): "fetch" | "waiting" | null {
    const x = this.extras;
    return x === null ? null : x.next;
  }
  set next(v: "fetch" | "waiting" | null) {
    if (v !== null || this.extras !== null) this.ownExtras().next = v;
  }

  /** Abstract resources required to run the task. */
  get resourceRestrictions(): ReadonlyMap<string, number> {
    const x = this.extras;
    return x === null ? EMPTY_RESOURCES : x.resourceRestrictions;
  }
  set resourceRestrictions(v: ReadonlyMap<string, number>) {
    if (v !== EMPTY_RESOURCES || this.extras !== null) this.ownExtras().resourceRestrictions = v;
  }

  /** The exception raised by running the task, as the shell represents it. */
  get exception(): unknown {
    const x = this.extras;
    return x === null ? null : x.exception;
  }
  set exception(v: unknown) {
    if (v !== null || this.extras !== null) this.ownExtras().exception = v;
  }

  /** The traceback of that exception. */
  get traceback(): unknown {
    const x = this.extras;
    return x === null ? null : x.traceback;
  }
  set traceback(v: unknown) {
    if (v !== null || this.extras !== null) this.ownExtras().traceback = v;
  }

  /** Text form of the exception. */
  get exceptionText(): string {
    const x = this.extras;
    return x === null ? "" : x.exceptionText;
  }
  set exceptionText(v: string) {
    if (v !== "" || this.extras !== null) this.ownExtras().exceptionText = v;
  }

  /** Text form of the traceback. */
  get tracebackText(): string {
    const x = this.extras;
    return x === null ? "" : x.tracebackText;
  }
  set tracebackText(v: string) {
    if (v !== "" || this.extras !== null) this.ownExtras().tracebackText = v;
  }

  /** The number of times a dependency has not been where we expected it. */
  get suspiciousCount(): number {
    const x = this.extras;
    return x === null ? 0 : x.suspiciousCount;
  }
  set suspiciousCount(v: number) {
    if (v !== 0 || this.extras !== null) this.ownExtras().suspiciousCount = v;
  }

  /**
   * Metadata related to the task (plugins). Shared and frozen while empty:
   * set a new object to add to it.
   */
  get metadata(): Readonly<Record<string, unknown>> {
    const x = this.extras;
    return x === null ? NO_METADATA : x.metadata;
  }
  set metadata(v: Readonly<Record<string, unknown>>) {
    if (v !== NO_METADATA || this.extras !== null) this.ownExtras().metadata = v;
  }

  /** Time at which the task began running (the state machine itself never sets it). */
  get startTime(): number | null {
    const x = this.extras;
    return x === null ? null : x.startTime;
  }
  set startTime(v: number | null) {
    if (v !== null || this.extras !== null) this.ownExtras().startTime = v;
  }

  /** Time at which the task finished running (the state machine itself never sets it). */
  get stopTime(): number | null {
    const x = this.extras;
    return x === null ? null : x.stopTime;
  }
  set stopTime(v: number | null) {
    if (v !== null || this.extras !== null) this.ownExtras().stopTime = v;
  }

  /** Unique span id. */
  get spanId(): string | null {
    const x = this.extras;
    return x === null ? null : x.spanId;
  }
  set spanId(v: string | null) {
    if (v !== null || this.extras !== null) this.ownExtras().spanId = v;
  }

  /** Link `dep` as a dependency of this task (and this task as its dependent). */
  addDependency(dep: TaskState): void {
    if (this.dependencies === NO_TASKS) this.dependencies = new Set();
    this.dependencies.add(dep);
    if (dep.dependents === NO_TASKS) dep.dependents = new Set();
    dep.dependents.add(this);
  }

  /** This task waits for `dep`'s data (and `dep` has this task as a waiter). */
  addWaitingFor(dep: TaskState): void {
    if (this.waitingForData === NO_TASKS) this.waitingForData = new Set();
    this.waitingForData.add(dep);
    if (dep.waiters === NO_TASKS) dep.waiters = new Set();
    dep.waiters.add(this);
  }

  /** Record a transfer, load or compute time. */
  addStartStop(ss: StartStop): void {
    if (this.startstops === NO_STARTSTOPS) this.startstops = [ss];
    else (this.startstops as StartStop[]).push(ss);
  }

  /** `nbytes`, or the default data size when unknown. */
  getNbytes(): number {
    const nbytes = this.nbytes;
    return nbytes !== null ? nbytes : DEFAULT_DATA_SIZE;
  }

  /**
   * `<TaskState 'key' state>`, as the seed's repr: the key as Python prints it
   * (a string's `repr()`, a tuple key as the tuple), so that dumps read back.
   */
  toString(): string {
    let state: string = this.state;
    if (this.state === "cancelled") state = `cancelled(${this.previous})`;
    else if (this.state === "resumed") state = `resumed(${this.previous}->${this.next})`;
    return `<TaskState ${pyKeyRepr(this.key)} ${state}>`;
  }
}

/** The resource restrictions of a task that has none (shared). */
export const EMPTY_RESOURCES: ReadonlyMap<string, number> = new Map();
