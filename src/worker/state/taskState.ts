import { keySplit } from "../../util/keySplit.ts";
import type { Priority } from "../../util/priority.ts";

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
  action: "compute" | "transfer" | "disk-read" | "disk-write" | "deserialize";
  start: number;
  stop: number;
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
    readonly task: unknown = null,
    readonly fn: unknown = null,
    readonly args: unknown = null,
    readonly kwargs: unknown = null,
  ) {}
}

/** Holds volatile state relating to an individual task on a worker. */
export class TaskState {
  /** Task key. */
  readonly key: string;
  /** Task prefix (leftmost part of the key). */
  readonly prefix: string;
  /** Task run ID. */
  runId = RUN_ID_SENTINEL;
  /** What to run; null when the task is a dependency fetched from a peer. */
  runSpec: SerializedTask | null = null;
  /** The data needed by this key to run. */
  readonly dependencies = new Set<TaskState>();
  /** The keys that use this dependency. */
  readonly dependents = new Set<TaskState>();
  /** Subset of dependencies that are not in memory. */
  readonly waitingForData = new Set<TaskState>();
  /** Subset of dependents that are not in memory. */
  readonly waiters = new Set<TaskState>();
  /** The current state of the task. */
  state: TaskStateState = "released";
  /** The previous state; not null iff `state` is cancelled or resumed. */
  previous: "executing" | "long-running" | "flight" | null = null;
  /** The next state; not null iff `state` is resumed. */
  next: "fetch" | "waiting" | null = null;
  /** Expected duration of the task. */
  duration: number | null = null;
  /** The priority this task was given by the scheduler; determines run order. */
  priority: Priority | null = null;
  /** Addresses of workers that we believe have this data. */
  whoHas = new Set<string>();
  /** The worker that the task's data is coming from while in flight. */
  comingFrom: string | null = null;
  /** Abstract resources required to run the task. */
  resourceRestrictions: ReadonlyMap<string, number> = EMPTY_RESOURCES;
  /** The exception raised by running the task, as the shell represents it. */
  exception: unknown = null;
  /** The traceback of that exception. */
  traceback: unknown = null;
  /** Text form of the exception. */
  exceptionText = "";
  /** Text form of the traceback. */
  tracebackText = "";
  /** Type name of the value in memory. */
  type: string | null = null;
  /** The number of times a dependency has not been where we expected it. */
  suspiciousCount = 0;
  /** Log of transfer, load and compute times. */
  startstops: StartStop[] = [];
  /** Time at which the task began running. */
  startTime: number | null = null;
  /** Time at which the task finished running. */
  stopTime: number | null = null;
  /** Metadata related to the task (plugins). */
  metadata: Record<string, unknown> = {};
  /** The size of the value of the task, if in memory. */
  nbytes: number | null = null;
  /** Arbitrary task annotations. */
  annotations: Record<string, unknown> | null = null;
  /** Unique span id. */
  spanId: string | null = null;
  /**
   * True if the execute or gather_dep servicing this task completed. Changes the
   * behaviour of transitions out of executing, flight etc.
   */
  done = false;

  constructor(key: string) {
    this.key = key;
    this.prefix = keySplit(key);
  }

  /** `nbytes`, or the default data size when unknown. */
  getNbytes(): number {
    const nbytes = this.nbytes;
    return nbytes !== null ? nbytes : DEFAULT_DATA_SIZE;
  }

  /** `<TaskState 'key' state>`, as the seed's repr. */
  toString(): string {
    let state: string = this.state;
    if (this.state === "cancelled") state = `cancelled(${this.previous})`;
    else if (this.state === "resumed") state = `resumed(${this.previous}->${this.next})`;
    return `<TaskState '${this.key}' ${state}>`;
  }
}

const EMPTY_RESOURCES: ReadonlyMap<string, number> = new Map();
