import { TASK_STATES, type TaskState, type TaskStateState } from "./taskState.ts";

const STATE_INDEX: Record<TaskStateState, number> = Object.fromEntries(
  TASK_STATES.map((s, i) => [s, i]),
) as Record<TaskStateState, number>;
const NSTATES = TASK_STATES.length;

/** A count or a duration per task prefix and state. */
export interface PrefixStateValue {
  prefix: string;
  state: TaskStateState;
  value: number;
}

/**
 * Current number of tasks and cumulative time spent in each state, both broken down
 * by task prefix. Time comes from the injected monotonic clock.
 */
export class TaskCounter {
  /** When the clock was last sampled. */
  private previousTs: number | null = null;
  /** Counts per prefix, indexed by state. */
  private readonly counts = new Map<string, Float64Array>();
  /** Cumulative seconds per prefix, indexed by state. */
  private readonly elapsed = new Map<string, Float64Array>();
  /** Tasks just inserted in the WorkerState and not counted yet (`ts.counted` is false). */
  private readonly newTasks: TaskState[] = [];

  constructor(private readonly monotonic: () => number) {}

  private row(map: Map<string, Float64Array>, prefix: string): Float64Array {
    let row = map.get(prefix);
    if (row === undefined) {
      row = new Float64Array(NSTATES);
      map.set(prefix, row);
    }
    return row;
  }

  /** Seconds since `previousTs`, for {@link addElapsed}. */
  private step = 0;

  private accumulate(now: number): void {
    if (this.counts.size === 0) return;
    this.step = now - (this.previousTs as number);
    // forEach with a method: a `for…of` destructuring the entries allocates an
    // entry array per prefix, and this runs once per stimulus.
    this.counts.forEach(this.addElapsed, this);
  }

  private addElapsed(row: Float64Array, prefix: string): void {
    const acc = this.row(this.elapsed, prefix);
    const step = this.step;
    for (let i = 0; i < NSTATES; i++) if (row[i] !== 0) acc[i] += step * row[i];
  }

  /** Current count of tasks per (prefix, state), or per state when `byPrefix` is false. */
  currentCount(byPrefix = true): PrefixStateValue[] {
    return this.flatten(this.counts, byPrefix);
  }

  /** The count of tasks with this prefix in this state. */
  count(prefix: string, state: TaskStateState): number {
    return this.counts.get(prefix)?.[STATE_INDEX[state]] ?? 0;
  }

  /** Ever-increasing cumulative task runtimes, as of now. */
  cumulativeElapsed(byPrefix = true): PrefixStateValue[] {
    if (this.counts.size > 0) {
      const now = this.monotonic();
      this.accumulate(now);
      this.previousTs = now;
    }
    return this.flatten(this.elapsed, byPrefix);
  }

  private flatten(map: Map<string, Float64Array>, byPrefix: boolean): PrefixStateValue[] {
    const out: PrefixStateValue[] = [];
    if (byPrefix) {
      for (const [prefix, row] of map) {
        for (let i = 0; i < NSTATES; i++) {
          if (row[i] !== 0) out.push({ prefix, state: TASK_STATES[i], value: row[i] });
        }
      }
      return out;
    }
    const total = new Float64Array(NSTATES);
    for (const row of map.values()) for (let i = 0; i < NSTATES; i++) total[i] += row[i];
    for (let i = 0; i < NSTATES; i++) {
      if (total[i] !== 0) out.push({ prefix: "", state: TASK_STATES[i], value: total[i] });
    }
    return out;
  }

  /** A task has just been created and is about to be fed to the transitions. */
  newTask(ts: TaskState): void {
    this.newTasks.push(ts);
  }

  /** Tasks `tasks[i]` (i < n) have just transitioned from `prevStates[i]` to their current states. */
  transitions(tasks: readonly TaskState[], prevStates: readonly TaskStateState[], n: number): void {
    if (n === 0 && this.newTasks.length === 0) return;
    const now = this.monotonic();
    this.accumulate(now);
    this.previousTs = now;

    for (let k = 0; k < n; k++) {
      const ts = tasks[k];
      const prevState = prevStates[k];
      // A counted task keeps its prefix's row (`counterRow`): the row cannot be dropped
      // while the task is counted in it, so the prefix is looked up once per task.
      let row = ts.counterRow;
      if (ts.state !== "forgotten") {
        if (row === null) row = this.row(this.counts, ts.prefix);
        row[STATE_INDEX[ts.state]] += 1;
      }
      if (!ts.counted) {
        ts.counted = true;
        ts.counterRow = row;
      } else {
        if (row === null) row = this.row(this.counts, ts.prefix);
        const i = STATE_INDEX[prevState];
        const dec = row[i] - 1;
        if (dec < 0) throw new Error(`TaskCounter: negative count for ${ts.prefix}/${prevState}`);
        row[i] = dec;
        if (dec === 0 && allZero(row)) this.counts.delete(ts.prefix);
      }
      if (ts.state === "forgotten") ts.counterRow = null;
    }
    // A cancelled(flight) -> resumed(flight->waiting) task with new dependencies leaves
    // them in released state; they are counted there.
    if (this.newTasks.length > 0) {
      const newTasks = this.newTasks;
      for (let k = 0; k < newTasks.length; k++) {
        const ts = newTasks[k];
        if (ts.counted) continue;
        ts.counted = true;
        const row = this.row(this.counts, ts.prefix);
        row[STATE_INDEX[ts.state]] += 1;
        ts.counterRow = row;
      }
      newTasks.length = 0;
    }
  }
}

function allZero(row: Float64Array): boolean {
  for (let i = 0; i < row.length; i++) if (row[i] !== 0) return false;
  return true;
}
