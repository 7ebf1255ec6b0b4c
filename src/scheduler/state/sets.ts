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
