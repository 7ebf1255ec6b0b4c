import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Tasks of one kind: those whose keys share a prefix (`keySplit`), as Dask's
 * `TaskGroup` groups them. The scheduler uses a group's size to tell root-ish
 * tasks (a large group without inputs) and, with queuing off, to place
 * consecutive tasks of the group on the same worker ("co-assignment"), so
 * that siblings a later task combines are already together.
 */
export class TaskGroup {
  /** Tasks of the group that the scheduler knows (not forgotten). */
  size = 0;
  /** The worker the last root-ish task of the group went to, with queuing off. */
  lastWorker: WorkerInfo | null = null;
  /** How many more of the group's tasks go to `lastWorker` before another is chosen. */
  lastWorkerTasksLeft = 0;
  /** The stimulus (`SchedulerState.stimulusCount`) that placed the run: runs end with it. */
  lastWorkerStimulus = 0;

  constructor(
    /** The group's name: the keys' shared prefix (`keySplit`). */
    readonly name: string,
  ) {}
}
