/**
 * Maps and Sets whose own iteration is not what they hold, for the tests of
 * the walks that must read them with the built-in iteration (see
 * collectionEntries.ts).
 */

/** What a rigged iterator throws. */
export const RIGGED = "a rigged iterator ran";

/**
 * An iterator that yields `item` forever, as far as a walk can tell: it throws
 * after 10,000 items, so that a walk calling it fails rather than hangs the test.
 */
function* forever<T>(item: T): Generator<T> {
  for (let i = 0; i < 10_000; i++) yield item;
  throw new Error(`${RIGGED} (10,000 items and counting)`);
}

/** A subclass of Map whose every iteration throws. */
export class ThrowingMap<K, V> extends Map<K, V> {
  override [Symbol.iterator](): MapIterator<[K, V]> {
    throw new Error(RIGGED);
  }
  override entries(): MapIterator<[K, V]> {
    throw new Error(RIGGED);
  }
}

/** A subclass of Set whose every iteration throws. */
export class ThrowingSet<T> extends Set<T> {
  override [Symbol.iterator](): SetIterator<T> {
    throw new Error(RIGGED);
  }
  override values(): SetIterator<T> {
    throw new Error(RIGGED);
  }
}

/** A plain Map of `entries` whose own `Symbol.iterator` and `entries` yield its first entry forever. */
export function endlessMap<K, V>(entries: readonly [K, V][]): Map<K, V> {
  const m = new Map(entries);
  const first = entries[0];
  Object.defineProperty(m, Symbol.iterator, { value: () => forever(first) });
  Object.defineProperty(m, "entries", { value: () => forever(first) });
  return m;
}

/** A plain Set of `members` whose own `Symbol.iterator` and `values` yield its first member forever. */
export function endlessSet<T>(members: readonly T[]): Set<T> {
  const s = new Set(members);
  Object.defineProperty(s, Symbol.iterator, { value: () => forever(members[0]) });
  Object.defineProperty(s, "values", { value: () => forever(members[0]) });
  return s;
}
