import { SCHEDULER_TASK_STATES, type SchedulerTaskStateName } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Tasks of one kind: those whose keys share a prefix (`keySplit`), as Dask's
 * `TaskGroup` groups them. The scheduler uses a group's size and the groups
 * its tasks depend on to tell root-ish tasks (a large group with few inputs,
 * Dask's `is_rootish`: see `placement.ts`), which are queued with queuing on
 * and, with queuing off, placed in runs of consecutive tasks of the group on
 * the same worker ("co-assignment"), so that siblings a later task combines
 * are already together.
 */
export class TaskGroup {
  /** Tasks of the group that the scheduler knows (not forgotten). */
  size = 0;
  /**
   * How many of the group's tasks are in each state (Dask's `TaskGroup.states`),
   * kept as each task moves: what the status page and the metrics show by
   * prefix and state, read without a scan of every task (9-15 ms at 200,000
   * tasks, the scheduler doing nothing else meanwhile). `forgotten` counts
   * those gone, no longer in `size`.
   */
  readonly states = Object.fromEntries(SCHEDULER_TASK_STATES.map((st) => [st, 0])) as Record<
    SchedulerTaskStateName,
    number
  >;
  /** The bytes of the group's results in memory, those of known size. */
  memoryBytes = 0;
  /**
   * The groups of the tasks this group's tasks depend on (Dask's
   * `TaskGroup.dependencies`; this group itself when its tasks depend on one
   * another). Added to as tasks get dependencies and, as in Dask, not taken
   * from as they are forgotten: a group all of whose tasks are forgotten
   * (`size` 0) is dropped by the scheduler and never filled again (a later
   * task of that name gets a new group), so {@link isLive} tells such a stale
   * entry, and {@link addDependency} sweeps them out as the set grows.
   */
  readonly dependencies: Set<TaskGroup> = new Set();
  /** The worker the last root-ish task of the group went to, with queuing off. */
  lastWorker: WorkerInfo | null = null;
  /** How many more of the group's tasks go to `lastWorker` before another is chosen. */
  lastWorkerTasksLeft = 0;
  /** The stimulus (`SchedulerState.stimulusCount`) that placed the run: runs end with it. */
  lastWorkerStimulus = 0;
  /** The size of `dependencies` at which {@link addDependency} next sweeps out dropped groups. */
  private sweepAt = 8;

  constructor(
    /** The group's name: the keys' shared prefix (`keySplit`). */
    readonly name: string,
  ) {}

  /**
   * False once every task of the group is forgotten: the scheduler has dropped
   * it (a group is only ever given tasks while it is filed, see
   * `SchedulerState.taskGroupOf`).
   */
  get isLive(): boolean {
    return this.size > 0;
  }

  /**
   * A task of this group depends on a task of `dg` (Dask's
   * `TaskState.add_dependency`). Dropped groups left in the set are swept out
   * whenever it has doubled, so that a long-lived group whose inputs' groups
   * come and go (each batch of inputs forgotten before the next is submitted)
   * does not hold every one it ever had.
   */
  addDependency(dg: TaskGroup): void {
    const deps = this.dependencies;
    if (deps.has(dg)) return;
    if (deps.size >= this.sweepAt) {
      for (const old of deps) if (!old.isLive) deps.delete(old);
      this.sweepAt = Math.max(8, deps.size * 2);
    }
    deps.add(dg);
  }
}
