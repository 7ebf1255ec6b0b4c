/**
 * Copy-on-first-add sets: fields that are usually empty share one empty set
 * and get their own `Set` only when something is added, which keeps the
 * per-task footprint small at a million tasks.
 *
 * Such a field is typed `ReadonlySet<T>` so that it cannot be mutated by
 * mistake; it changes only through {@link setAdd} and {@link setDelete}.
 */

/** The one shared empty set. Never mutated: {@link setAdd} replaces it. */
export const EMPTY: ReadonlySet<never> = new Set<never>();

/** `s` with `value` added: `s` itself, or a new set if `s` was the shared {@link EMPTY}. */
export function setAdd<T>(s: ReadonlySet<T>, value: T): ReadonlySet<T> {
  if (s === EMPTY) return new Set<T>([value]);
  (s as Set<T>).add(value);
  return s;
}

/** Remove `value` from `s`; true iff it was there. Safe on {@link EMPTY}. */
export function setDelete<T>(s: ReadonlySet<T>, value: T): boolean {
  return s.size !== 0 && (s as Set<T>).delete(value);
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
