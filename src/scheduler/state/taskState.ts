import type { TaskSpec } from "../../protocol/messagesTaskSpec.ts";
import type { Priority } from "../../util/priority.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { EMPTY } from "./sets.ts";
import type { TaskGroup } from "./taskGroup.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * A task's state on the scheduler (Dask's scheduler task states).
 * Not to be confused with the worker's task states.
 *
 * - `released`: known, not wanted by anything in play, or about to be (re)computed;
 * - `waiting`: on the way to running, waiting for dependencies;
 * - `queued`: ready, root-ish (its inputs, if any, in memory), held back because every worker is saturated;
 * - `no-worker`: ready, but no running worker can run it (restrictions, or no workers);
 * - `processing`: assigned to a worker (`processingOn`);
 * - `memory`: its result is held by one or more workers (`whoHas`);
 * - `erred`: it, or a task it depends on, raised;
 * - `forgotten`: removed from the scheduler.
 */
export type SchedulerTaskStateName =
  | "released"
  | "waiting"
  | "queued"
  | "no-worker"
  | "processing"
  | "memory"
  | "erred"
  | "forgotten";

/** Every scheduler task state. */
export const SCHEDULER_TASK_STATES: readonly SchedulerTaskStateName[] = [
  "released",
  "waiting",
  "queued",
  "no-worker",
  "processing",
  "memory",
  "erred",
  "forgotten",
];

/** The states of a task that is in play: on its way to memory. */
export const IN_PLAY: ReadonlySet<SchedulerTaskStateName> = new Set<SchedulerTaskStateName>([
  "waiting",
  "queued",
  "processing",
  "no-worker",
]);

/** `runId` of a task that was never sent to a worker. */
export const NO_RUN_ID = -1;

/** Placeholder priority of a task before `update-graph` gives it one. */
export const NO_PRIORITY: Priority = [];

/** Where a task may run (Dask's `worker_restrictions`, `host_restrictions` and `loose_restrictions`). */
export interface WorkerRestrictions {
  /** Worker addresses, and hosts meaning any worker there. */
  readonly names: ReadonlySet<string>;
  /** Run elsewhere when none of them can (`allowOtherWorkers`). */
  readonly loose: boolean;
}

/**
 * The scheduler's view of one task (Dask's `distributed.scheduler.TaskState`).
 *
 * Fields are public for the transitions, handlers and validation of this
 * package; nothing else may mutate them. Usually-empty sets share {@link EMPTY}
 * until something is added (see `sets.ts`).
 */
export class TaskState {
  /** The task's key. */
  readonly key: string;
  /** What to run; null for a key the scheduler only knows as a name. */
  runSpec: TaskSpec | null;
  /** The group of tasks of its kind (by key prefix). */
  readonly group: TaskGroup;
  private stateValue: SchedulerTaskStateName = "released";
  private nbytesValue = -1;
  /** `[-user priority, generation, graph order]`: lower runs first. */
  priority: Priority = NO_PRIORITY;

  /** Tasks whose results this task needs. */
  dependencies: ReadonlySet<TaskState> = EMPTY;
  /** Tasks that need this task's result. */
  dependents: ReadonlySet<TaskState> = EMPTY;
  /** Dependencies not yet in memory, while this task is `waiting`. */
  waitingOn: ReadonlySet<TaskState> = EMPTY;
  /** Dependents in play (waiting, queued, no-worker, processing) that need this task. */
  waiters: ReadonlySet<TaskState> = EMPTY;
  /** Clients that want this task's result. */
  whoWants: ReadonlySet<ClientInfo> = EMPTY;
  /** Workers holding the result; non-empty iff the state is `memory`. */
  whoHas: ReadonlySet<WorkerInfo> = EMPTY;
  /** The worker computing the task; set iff the state is `processing`. */
  processingOn: WorkerInfo | null = null;

  /** The run id of the last `compute-task` sent for it; results of other runs are stale. */
  runId = NO_RUN_ID;
  /** How many more times the task may be re-run after it raises. */
  retries = 0;
  /** How many workers died while running it (Dask's `suspicious`). */
  suspicious = 0;
  /** `{resource: amount}` a worker must supply to run it, or null. */
  resourceRestrictions: Readonly<Record<string, number>> | null = null;
  /** The workers that may run it (`workers=`), or null for any. One field: every task pays for it. */
  workerRestrictions: WorkerRestrictions | null = null;
  /** User annotations, passed on in `compute-task`. */
  annotations: Readonly<Record<string, unknown>> | null = null;
  /** The result's type name, once in memory. */
  typename: string | null = null;
  /** Task metadata reported by workers with `task-finished`. */
  metadata: Record<string, unknown> | null = null;

  /** The opaque error, when this task raised. */
  exception: unknown = null;
  /** The opaque traceback, when this task raised. */
  traceback: unknown = null;
  /** Text of the error, when this task raised. */
  exceptionText = "";
  /** Text of the traceback, when this task raised. */
  tracebackText = "";
  /** The task that raised and made this one `erred`: itself or a dependency. */
  exceptionBlame: TaskState | null = null;
  /** Workers on which the task raised; told to free it when it is released. */
  erredOn: ReadonlySet<string> = EMPTY;
  /**
   * The finish state recommended for it and not yet acted on, or null: the
   * state machine's work list (`SchedulerState.recommend`), kept on the task
   * instead of in a map.
   */
  recommended: SchedulerTaskStateName | null = null;
  /**
   * It has reached `memory` or `erred` at least once: counted in
   * `SchedulerState.tasksDone`, and not again when its result is lost and it
   * is computed again (or retried after erring) while it lives here.
   */
  everDone = false;
  /**
   * It was done first by erring (`everDone` set as it reached `erred`): counted
   * in `SchedulerState.tasksDoneErred`, once, as `everDone` is in `tasksDone`.
   */
  doneErred = false;
  /** A dependency was forgotten: the task can no longer be computed. */
  hasLostDependencies = false;
  /**
   * The wanted tasks whose clients were told (`task-no-worker`) that this task,
   * in `no-worker`, holds them up: they are told again when it leaves
   * `no-worker`. Null when none.
   */
  noWorkerTold: Set<TaskState> | null = null;
  /**
   * The task's result is an actor (Dask's `actor=True`, from the graph): an
   * object that stays on the worker that made it (the one counting it in
   * `WorkerInfo.actors`), called through handles; other holders have handles.
   * Placed to spread actors, never queued, copied, moved or stolen, and erred
   * (`ACTOR_LOST`) when its worker is lost while a client wants it. Sent to
   * the worker in `compute-task`.
   */
  actor = false;
  /**
   * The number of replicas the last `replicate` of this key asked for (or,
   * for a value scattered to several workers, the number it was put on),
   * which the Active Memory Manager keeps (see `activeMemoryManager.ts`); 0 if
   * none was asked since the key last entered memory (cleared when its last
   * replica goes).
   */
  replicasWanted = 0;
  /**
   * The workers (addresses, hosts or names) the last `replicate` of this key
   * named, among which {@link replicasWanted} replicas are kept; null for any
   * worker.
   */
  replicasWantedOn: ReadonlySet<string> | null = null;

  /** Create a released task; counts it in `group`. */
  constructor(key: string, runSpec: TaskSpec | null, group: TaskGroup) {
    this.key = key;
    this.runSpec = runSpec;
    this.group = group;
    group.size += 1;
    group.states.released += 1;
  }

  /** Current state. Setting it moves the task between its group's counts. */
  get state(): SchedulerTaskStateName {
    return this.stateValue;
  }

  set state(next: SchedulerTaskStateName) {
    const prev = this.stateValue;
    const group = this.group;
    group.states[prev] -= 1;
    group.states[next] += 1;
    const bytes = Math.max(0, this.nbytesValue);
    if (prev === "memory") group.memoryBytes -= bytes;
    if (next === "memory") group.memoryBytes += bytes;
    this.stateValue = next;
  }

  /** Size of the result in bytes; -1 while unknown. Setting it in memory moves its group's bytes. */
  get nbytes(): number {
    return this.nbytesValue;
  }

  set nbytes(next: number) {
    if (this.stateValue === "memory") {
      this.group.memoryBytes += Math.max(0, next) - Math.max(0, this.nbytesValue);
    }
    this.nbytesValue = next;
  }

  /** `<TaskState 'key' state>`, as Dask prints it. */
  toString(): string {
    return `<TaskState '${this.key}' ${this.state}>`;
  }
}
