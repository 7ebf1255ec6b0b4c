import type { TaskState, TaskStateState } from "./taskState.ts";

/**
 * A recommended finish state, optionally with the arguments of its transition
 * (`["memory", value, runId]`, `["error", exception, traceback, text, text, runId]`,
 * `["long-running", computeDuration]`, `["flight", worker]`).
 */
export type Finish = TaskStateState | FinishWithArgs;
/** A finish state with its transition's arguments, as the seed's `(state, *args)` tuples. */
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
  private index: Map<TaskState, number> | null = null;

  constructor(
    /** Alternating tasks and finishes, in insertion order; deleted entries are holes (null). */
    private items: (TaskState | Finish | null)[] = [],
    private live = 0,
  ) {}

  /** How many tasks have a recommendation. */
  get size(): number {
    return this.live;
  }

  /** `{ts: finish}`: one recommendation, in an exactly sized array. */
  static of(ts: TaskState, finish: Finish): Recs {
    return new Recs([ts, finish], 1);
  }

  /** The position of `ts` in `items`, or -1. */
  private find(ts: TaskState): number {
    if (this.index !== null) {
      const i = this.index.get(ts);
      return i === undefined ? -1 : i;
    }
    const items = this.items;
    for (let i = 0; i < items.length; i += 2) if (items[i] === ts) return i;
    return -1;
  }

  /** Whether `ts` has a recommendation. */
  has(ts: TaskState): boolean {
    return this.find(ts) >= 0;
  }

  /** The finish recommended for `ts`, or undefined. */
  get(ts: TaskState): Finish | undefined {
    const i = this.find(ts);
    return i >= 0 ? (this.items[i + 1] as Finish) : undefined;
  }

  /** Recommends `finish` for `ts`, replacing an earlier recommendation in its place. */
  set(ts: TaskState, finish: Finish): this {
    const i = this.find(ts);
    if (i >= 0) {
      this.items[i + 1] = finish;
      return this;
    }
    const at = this.items.length;
    this.items.push(ts, finish);
    this.live++;
    if (this.index !== null) this.index.set(ts, at);
    else if (at >= 2 * INDEX_THRESHOLD) this.buildIndex();
    return this;
  }

  private buildIndex(): void {
    const index = new Map<TaskState, number>();
    const items = this.items;
    for (let i = 0; i < items.length; i += 2) {
      const ts = items[i];
      if (ts !== null) index.set(ts as TaskState, i);
    }
    this.index = index;
  }

  /** `dict.pop(ts, None)`. */
  delete(ts: TaskState): Finish | undefined {
    const i = this.find(ts);
    if (i < 0) return undefined;
    const finish = this.items[i + 1] as Finish;
    this.items[i] = null;
    this.items[i + 1] = null;
    this.live--;
    if (this.index !== null) this.index.delete(ts);
    this.trim();
    return finish;
  }

  private trim(): void {
    const items = this.items;
    while (items.length > 0 && items[items.length - 2] === null) items.length -= 2;
  }

  /** The task `popLast` would take, or null when empty. */
  lastTask(): TaskState | null {
    const items = this.items;
    return items.length > 0 ? (items[items.length - 2] as TaskState) : null;
  }

  /** `dict.popitem()`: removes the last inserted entry and returns its finish. */
  popLast(): Finish {
    const items = this.items;
    const finish = items.pop() as Finish;
    const ts = items.pop() as TaskState;
    this.live--;
    if (this.index !== null) this.index.delete(ts);
    this.trim();
    return finish;
  }

  /** `dict.update(other)`. */
  update(other: Recs | null): void {
    if (other === null) return;
    const items = other.items;
    for (let i = 0; i < items.length; i += 2) {
      const ts = items[i];
      if (ts !== null) this.set(ts as TaskState, items[i + 1] as Finish);
    }
  }

  /** A shallow copy. */
  copy(): Recs {
    const out = new Recs();
    out.update(this);
    return out;
  }

  /**
   * Calls `fn(finish, ts)` for each recommendation, in the order they were made (as a Map's
   * `forEach`).
   */
  forEach(fn: (finish: Finish, ts: TaskState) => void): void {
    const items = this.items;
    for (let i = 0; i < items.length; i += 2) {
      const ts = items[i];
      if (ts !== null) fn(items[i + 1] as Finish, ts as TaskState);
    }
  }

  /** The `[task, finish]` pairs, in the order they were made. */
  *[Symbol.iterator](): IterableIterator<[TaskState, Finish]> {
    const items = this.items;
    for (let i = 0; i < items.length; i += 2) {
      const ts = items[i];
      if (ts !== null) yield [ts as TaskState, items[i + 1] as Finish];
    }
  }
}
