/**
 * Task priorities, ordered the way the reference orders them.
 *
 * Dask priorities are Python tuples of numbers and are compared with Python's
 * tuple ordering. Comparisons happen inside heap sift loops on the hottest path
 * of the worker state machine, so this module compares without allocating.
 */

/**
 * A task priority: the port's stand-in for a Python tuple of numbers.
 * Read-only so that a priority stored in a heap cannot be mutated under it.
 * Entries must not be NaN (Python's tuple ordering is not a total order then).
 */
export type Priority = readonly number[];

/**
 * Compare two priorities with Python tuple ordering: element by element, the
 * first differing element decides; if one is a prefix of the other, the shorter
 * sorts first.
 *
 * Returns -1 iff `a < b` in Python, 1 iff `a > b`, and 0 when they are equal. Allocation-free.
 */
export function comparePriority(a: Priority, b: Priority): number {
  const la = a.length;
  const lb = b.length;
  const n = Math.min(la, lb);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y) {
      // Python: the first element where the tuples differ decides, using `<`.
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
  return la < lb ? -1 : la > lb ? 1 : 0;
}
