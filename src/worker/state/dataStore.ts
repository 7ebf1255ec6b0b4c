/**
 * Where a worker keeps task values. A `Map<string, unknown>` is one; a store that
 * spills to disk or lives elsewhere may be another. `set` may throw (the seed's
 * `data[key] = value` may fail when a spilling store cannot serialise a value): the
 * task then errs with that error.
 */
export interface DataStore {
  /** Whether a value for `key` is stored. */
  has(key: string): boolean;
  /** The value of `key`, or undefined when there is none. */
  get(key: string): unknown;
  /** Stores `value` under `key`; may throw (a spilling store that cannot serialise it). */
  set(key: string, value: unknown): unknown;
  /** Drops `key`'s value; false when there was none. */
  delete(key: string): boolean;
  /** The keys stored, in no promised order. */
  keys(): IterableIterator<string>;
  /** How many values are stored. */
  readonly size: number;
}

/** A worker plugin; the state machine calls its `transition` hook after every transition. */
export interface WorkerPlugin {
  /**
   * Called after each transition of `key` from `start` to `finish` (the seed's
   * `WorkerPlugin.transition`).
   */
  transition?(key: string, start: string, finish: string): void;
}
