import { stateIndex, TASK_STATES, type TaskState, type TaskStateState } from "./taskState.ts";

const NSTATES = TASK_STATES.length;

/** A count or a duration per task prefix and state. */
export interface PrefixStateValue {
  /** The task prefix (the leftmost part of the key). */
  prefix: string;
  /** The task state the value is for. */
  state: TaskStateState;
  /** A count of tasks, or a duration in seconds, depending on the metric. */
  value: number;
}

/**
 * Current number of tasks and cumulative time spent in each state, both broken down
 * by task prefix. Time comes from the injected monotonic clock.
 *
 * One row per prefix: `[counts per state…, seconds per state…, since]`. A row's
 * seconds are brought up to date ("settled") only when its counts change or the
 * totals are read, from the time it was last settled: the counts are constant in
 * between, so this adds what the seed adds at every stimulus for every prefix (as
 * Dask does), at a cost per change rather than per stimulus × live prefixes, which
 * grew quadratically with keys of many prefixes (`x0`, `x1`, … are each their own).
 */
export class TaskCounter {
  /** Every prefix seen, with its row. */
  private readonly rows = new Map<string, Float64Array>();
  /** Tasks just inserted in the WorkerState and not counted yet (`ts.counted` is false). */
  private readonly newTasks: (TaskState | undefined)[] = [];
  /**
   * How many of `newTasks` are pending. The array is kept and its slots cleared: setting
   * an array's length is a call into V8's runtime, once per stimulus that made tasks.
   */
  private newTaskCount = 0;

  constructor(private readonly monotonic: () => number) {}

  private row(prefix: string, now: number): Float64Array {
    let row = this.rows.get(prefix);
    if (row === undefined) {
      row = new Float64Array(ROW_LENGTH);
      row[SINCE] = now;
      this.rows.set(prefix, row);
    }
    return row;
  }

  /** Current count of tasks per (prefix, state), or per state when `byPrefix` is false. */
  currentCount(byPrefix = true): PrefixStateValue[] {
    return this.flatten(0, byPrefix);
  }

  /** The count of tasks with this prefix in this state. */
  count(prefix: string, state: TaskStateState): number {
    return this.rows.get(prefix)?.[stateIndex(state)] ?? 0;
  }

  /** Ever-increasing cumulative task runtimes, as of now. */
  cumulativeElapsed(byPrefix = true): PrefixStateValue[] {
    const now = this.monotonic();
    for (const row of this.rows.values()) settle(row, now);
    return this.flatten(NSTATES, byPrefix);
  }

  private flatten(offset: number, byPrefix: boolean): PrefixStateValue[] {
    const out: PrefixStateValue[] = [];
    if (byPrefix) {
      for (const [prefix, row] of this.rows) {
        for (let i = 0; i < NSTATES; i++) {
          const value = row[offset + i];
          if (value !== 0) out.push({ prefix, state: TASK_STATES[i], value });
        }
      }
      return out;
    }
    const total = new Float64Array(NSTATES);
    for (const row of this.rows.values()) {
      for (let i = 0; i < NSTATES; i++) total[i] += row[offset + i];
    }
    for (let i = 0; i < NSTATES; i++) {
      if (total[i] !== 0) out.push({ prefix: "", state: TASK_STATES[i], value: total[i] });
    }
    return out;
  }

  /** A task has just been created and is about to be fed to the transitions. */
  newTask(ts: TaskState): void {
    this.newTasks[this.newTaskCount++] = ts;
  }

  /** Tasks `tasks[i]` (i < n) have just transitioned from `prevStates[i]` to their current states. */
  transitions(tasks: readonly TaskState[], prevStates: readonly TaskStateState[], n: number): void {
    if (n === 0 && this.newTaskCount === 0) return;
    const now = this.monotonic();

    for (let k = 0; k < n; k++) {
      const ts = tasks[k];
      const prevState = prevStates[k];
      // A counted task keeps its prefix's row (`counterRow`): the prefix is looked up
      // once per task.
      let row = ts.counterRow;
      if (row === null) row = this.row(ts.prefix, now);
      settle(row, now);
      if (ts.state !== "forgotten") row[stateIndex(ts.state)] += 1;
      if (!ts.counted) {
        ts.counted = true;
        ts.counterRow = row;
      } else {
        const i = stateIndex(prevState);
        const dec = row[i] - 1;
        if (dec < 0) throw new Error(`TaskCounter: negative count for ${ts.prefix}/${prevState}`);
        row[i] = dec;
      }
      if (ts.state === "forgotten") ts.counterRow = null;
    }
    // A cancelled(flight) -> resumed(flight->waiting) task with new dependencies leaves
    // them in released state; they are counted there.
    if (this.newTaskCount > 0) {
      const newTasks = this.newTasks;
      const count = this.newTaskCount;
      this.newTaskCount = 0;
      for (let k = 0; k < count; k++) {
        const ts = newTasks[k] as TaskState;
        newTasks[k] = undefined;
        if (ts.counted) continue;
        ts.counted = true;
        const row = this.row(ts.prefix, now);
        settle(row, now);
        row[stateIndex(ts.state)] += 1;
        ts.counterRow = row;
      }
    }
  }
}

/** Index of a row's `since`: when its seconds were last brought up to date. */
const SINCE = 2 * NSTATES;
const ROW_LENGTH = 2 * NSTATES + 1;

/** Add to `row`'s seconds the time since it was last settled, at its counts. */
function settle(row: Float64Array, now: number): void {
  const step = now - row[SINCE];
  if (step !== 0) {
    for (let i = 0; i < NSTATES; i++) {
      const count = row[i];
      if (count !== 0) row[NSTATES + i] += step * count;
    }
  }
  row[SINCE] = now;
}
