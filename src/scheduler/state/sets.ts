/**
 * Copy-on-first-add sets: fields that are usually empty share one empty set
 * and get their own set only when something is added, which keeps the
 * per-task footprint small at a million tasks. A set of a few elements (most
 * tasks have a few dependencies, dependents and waiters) is a {@link SmallSet}
 * kept in an array; a larger one becomes a `Set`.
 *
 * Such a field is typed `ReadonlySet<T>` so that it cannot be mutated by
 * mistake; it changes only through {@link setAdd} and {@link setDelete}, and
 * never while it is being iterated (none of the state machine's loops mutates
 * the set it walks).
 */

/** The one shared empty set. Never mutated: {@link setAdd} replaces it. */
export const EMPTY: ReadonlySet<never> = new Set<never>();

/** The most elements a {@link SmallSet} holds; {@link setAdd} makes a `Set` beyond. */
export const SMALL_SET_MAX = 8;

/**
 * An insertion-ordered set of a few elements in an array. Against a `Set` of
 * the same elements it takes about half the memory (96 against ~180 bytes for
 * two; these sets live as long as their tasks, so they are promoted and
 * collected as old objects), and `has` and `delete` compare references without
 * reading the elements' hashes.
 */
export class SmallSet<T> implements ReadonlySet<T> {
  /** The elements, in insertion order. Replaced on growth; read through {@link itemsOf}. */
  items: T[];

  constructor(first: T) {
    this.items = [first];
  }

  get size(): number {
    return this.items.length;
  }

  has(value: T): boolean {
    return this.items.indexOf(value) >= 0;
  }

  /**
   * Append `value` (known to be absent). For {@link setAdd}. The array is
   * replaced by one of the exact size: `push` would grow a one-element array
   * to 17 slots (200 bytes for two elements, more than a `Set`).
   */
  push(value: T): void {
    this.items = this.items.concat([value]);
  }

  /** Remove `value`, keeping the order of the rest; true iff it was there. For {@link setDelete}. */
  remove(value: T): boolean {
    const items = this.items;
    const i = items.indexOf(value);
    if (i < 0) return false;
    if (i === items.length - 1) items.pop();
    else items.splice(i, 1);
    return true;
  }

  forEach(fn: (value: T, value2: T, set: ReadonlySet<T>) => void, thisArg?: unknown): void {
    for (const v of this.items) fn.call(thisArg, v, v, this);
  }

  keys(): IterableIterator<T> {
    return this.items.values();
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  entries(): IterableIterator<[T, T]> {
    return this.items.map((v): [T, T] => [v, v]).values();
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.items.values();
  }
}

const NO_ITEMS: readonly never[] = [];

/**
 * The elements of a set field, as an array to walk with `for…of`. A field is
 * the shared empty `Set`, a {@link SmallSet} or a `Set`: iterating it directly
 * is polymorphic, which V8 does not optimise, and every step of such a loop
 * allocates its result object (~0.7 kB a task on a tree graph). A
 * {@link SmallSet} gives its own array (no copy), so the set must not change
 * while the loop walks it, as for every set field.
 */
export function itemsOf<T>(s: ReadonlySet<T>): readonly T[] {
  if (s instanceof SmallSet) return s.items;
  if (s.size === 0) return NO_ITEMS;
  return Array.from(s);
}

/**
 * `s` with `value` added: `s` itself, or, when `s` was the shared {@link EMPTY}
 * or a full {@link SmallSet}, a new set. Assign the result back to the field.
 */
export function setAdd<T>(s: ReadonlySet<T>, value: T): ReadonlySet<T> {
  if (s === EMPTY) return new SmallSet<T>(value);
  if (s instanceof SmallSet) {
    if (s.has(value)) return s;
    if (s.size < SMALL_SET_MAX) {
      s.push(value);
      return s;
    }
    const grown = new Set<T>(s);
    grown.add(value);
    return grown;
  }
  (s as Set<T>).add(value);
  return s;
}

/** Remove `value` from `s`; true iff it was there. Safe on {@link EMPTY}. */
export function setDelete<T>(s: ReadonlySet<T>, value: T): boolean {
  if (s.size === 0) return false;
  if (s instanceof SmallSet) return s.remove(value);
  return (s as Set<T>).delete(value);
}

/**
 * A set of one element, shared by every field that holds just that element
 * (most tasks are wanted by one client and held by one worker): never mutated,
 * {@link sharedAdd} and {@link sharedRemove} replace it.
 */
class SharedSingleton<T> extends Set<T> {}

/** The shared singletons, by element (dropped with their element). */
const singletons = new WeakMap<object, SharedSingleton<unknown>>();

function singletonOf<T extends object>(value: T): ReadonlySet<T> {
  let s = singletons.get(value) as SharedSingleton<T> | undefined;
  if (s === undefined) {
    s = new SharedSingleton<T>([value]);
    singletons.set(value, s);
  }
  return s;
}

/**
 * `s` with `value` added, for fields that may hold a shared singleton: the
 * singleton of `value` for an empty field, a copy of a singleton, else `s`
 * itself. Assign the result back to the field.
 */
export function sharedAdd<T extends object>(s: ReadonlySet<T>, value: T): ReadonlySet<T> {
  if (s.size === 0) return singletonOf(value);
  if (s instanceof SharedSingleton) {
    if (s.has(value)) return s;
    const copy = new Set<T>(s);
    copy.add(value);
    return copy;
  }
  (s as Set<T>).add(value);
  return s;
}

/**
 * `s` without `value`, for fields that may hold a shared singleton (see
 * {@link sharedAdd}). Assign the result back to the field.
 */
export function sharedRemove<T extends object>(s: ReadonlySet<T>, value: T): ReadonlySet<T> {
  if (s.size === 0) return s;
  if (s instanceof SharedSingleton) return s.has(value) ? EMPTY : s;
  (s as Set<T>).delete(value);
  return s;
}
