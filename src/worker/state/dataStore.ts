/**
 * Where a worker keeps task values. A `Map<string, unknown>` is one; a store that
 * spills to disk or lives elsewhere may be another. `set` may throw (the seed's
 * `data[key] = value` may fail when a spilling store cannot serialise a value): the
 * task then errs with that error.
 */
export interface DataStore {
  has(key: string): boolean;
  get(key: string): unknown;
  set(key: string, value: unknown): unknown;
  delete(key: string): boolean;
  keys(): IterableIterator<string>;
  readonly size: number;
}

/** A worker plugin; the state machine calls its `transition` hook after every transition. */
export interface WorkerPlugin {
  transition?(key: string, start: string, finish: string): void;
}
