import type { TaskState, TaskStateState } from "./taskState.ts";

/**
 * A recommended finish state, optionally with the arguments of its transition
 * (`["memory", value, runId]`, `["error", exception, traceback, text, text, runId]`,
 * `["long-running", computeDuration]`, `["flight", worker]`).
 */
export type Finish = TaskStateState | FinishWithArgs;
export type FinishWithArgs = readonly [TaskStateState, ...unknown[]];

/** The state a recommendation leads to. */
export function finishState(finish: Finish): TaskStateState {
  return typeof finish === "string" ? finish : finish[0];
}

/** Python's `==` between two recommendations: tuples compare element by element. */
export function sameFinish(a: Finish, b: Finish): boolean {
  if (a === b) return true;
  if (typeof a === "string" || typeof b === "string") return false;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) return false;
  }
  return true;
}

const INDEX_THRESHOLD = 8;

/**
 * Recommendations `{task: finish}`: a dict with Python's semantics that matter here.
 * Iteration is in insertion order; re-setting a key keeps its position; `popLast`
 * takes the entry inserted last, like `dict.popitem()`. Small instances search
 * linearly; large ones build an index.
 */
export class Recs {
  private tasks: (TaskState | null)[] = [];
  private finishes: (Finish | null)[] = [];
  private index: Map<TaskState, number> | null = null;
  private live = 0;

  get size(): number {
    return this.live;
  }

  private find(ts: TaskState): number {
    if (this.index !== null) {
      const i = this.index.get(ts);
      return i === undefined ? -1 : i;
    }
    const tasks = this.tasks;
    for (let i = 0; i < tasks.length; i++) if (tasks[i] === ts) return i;
    return -1;
  }

  has(ts: TaskState): boolean {
    return this.find(ts) >= 0;
  }

  get(ts: TaskState): Finish | undefined {
    const i = this.find(ts);
    return i >= 0 ? (this.finishes[i] as Finish) : undefined;
  }

  set(ts: TaskState, finish: Finish): this {
    const i = this.find(ts);
    if (i >= 0) {
      this.finishes[i] = finish;
      return this;
    }
    const at = this.tasks.length;
    this.tasks.push(ts);
    this.finishes.push(finish);
    this.live++;
    if (this.index !== null) this.index.set(ts, at);
    else if (at >= INDEX_THRESHOLD) this.buildIndex();
    return this;
  }

  private buildIndex(): void {
    const index = new Map<TaskState, number>();
    const tasks = this.tasks;
    for (let i = 0; i < tasks.length; i++) {
      const ts = tasks[i];
      if (ts !== null) index.set(ts, i);
    }
    this.index = index;
  }

  /** `dict.pop(ts, None)`. */
  delete(ts: TaskState): Finish | undefined {
    const i = this.find(ts);
    if (i < 0) return undefined;
    const finish = this.finishes[i] as Finish;
    this.tasks[i] = null;
    this.finishes[i] = null;
    this.live--;
    if (this.index !== null) this.index.delete(ts);
    this.trim();
    return finish;
  }

  private trim(): void {
    const tasks = this.tasks;
    while (tasks.length > 0 && tasks[tasks.length - 1] === null) {
      tasks.pop();
      this.finishes.pop();
    }
  }

  /** The task `popLast` would take, or null when empty. */
  lastTask(): TaskState | null {
    const tasks = this.tasks;
    return tasks.length > 0 ? tasks[tasks.length - 1] : null;
  }

  /** `dict.popitem()`: removes the last inserted entry and returns its finish. */
  popLast(): Finish {
    const ts = this.tasks.pop() as TaskState;
    const finish = this.finishes.pop() as Finish;
    this.live--;
    if (this.index !== null) this.index.delete(ts);
    this.trim();
    return finish;
  }

  /** `dict.update(other)`. */
  update(other: Recs | null): void {
    if (other === null) return;
    const tasks = other.tasks;
    const finishes = other.finishes;
    for (let i = 0; i < tasks.length; i++) {
      const ts = tasks[i];
      if (ts !== null) this.set(ts, finishes[i] as Finish);
    }
  }

  /** A shallow copy. */
  copy(): Recs {
    const out = new Recs();
    out.update(this);
    return out;
  }

  forEach(fn: (finish: Finish, ts: TaskState) => void): void {
    const tasks = this.tasks;
    const finishes = this.finishes;
    for (let i = 0; i < tasks.length; i++) {
      const ts = tasks[i];
      if (ts !== null) fn(finishes[i] as Finish, ts);
    }
  }

  *[Symbol.iterator](): IterableIterator<[TaskState, Finish]> {
    const tasks = this.tasks;
    for (let i = 0; i < tasks.length; i++) {
      const ts = tasks[i];
      if (ts !== null) yield [ts, this.finishes[i] as Finish];
    }
  }
}
