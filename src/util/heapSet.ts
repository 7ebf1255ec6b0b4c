/**
 * A port of `distributed.collections.HeapSet`: a set whose `pop` returns the
 * smallest member according to a key function, ties broken oldest first.
 *
 * The worker state machine keeps its `ready` and `constrained` queues in
 * HeapSets, and which task runs next depends on the exact heap behaviour,
 * including the reference's lazy deletion. So this is a line-by-line port:
 *
 * - the heap holds entries `(key, insertion counter, value)` compared by
 *   `(key, counter)`; the sift routines are those of CPython's `heapq`, so the
 *   array layout (which `peekright`/`popright` observe) matches the reference;
 * - `discard` only removes the value from the membership set (and clears
 *   everything once that set is empty). Its heap entry stays behind;
 * - an entry is valid iff its value is currently a member. Re-adding a
 *   discarded value pushes a new entry, and the old one, still in the heap,
 *   counts as valid again, so the value may come out at its old position.
 *
 * The reference holds values through weak references; here entries hold strong
 * references until they are popped or the set is cleared. A collected weakref
 * can never be a member, so membership answers are unchanged.
 */

import type { Priority } from "./priority.ts";
import { comparePriority } from "./priority.ts";
import { KeyError } from "./pyErrors.ts";

/** One heap entry: the reference's `(key, self._inc, weakref(value))` tuple (for sorting only). */
interface Entry<T> {
  readonly key: Priority;
  readonly inc: number;
  readonly value: T;
}

/** `list.sort()` on the entry tuples: a total order because counters are unique. */
function entryCompare<T>(a: Entry<T>, b: Entry<T>): number {
  const c = comparePriority(a.key, b.key);
  return c !== 0 ? c : a.inc - b.inc;
}

/**
 * `key[i]`, or -Infinity where the key has no element `i`: the value cached beside each
 * key. A tie on it (a key holding -Infinity itself) is settled by the full comparison.
 */
function elementOrBottom(key: Priority, i: number): number {
  return key.length > i ? key[i] : Number.NEGATIVE_INFINITY;
}

/** A value that can carry its own membership of a few HeapSets, one bit each. */
export interface HeapMarked {
  /** One bit per HeapSet this value is in (the sets that mark their members); 0 when in none. */
  heapMarks: number;
}

/**
 * A set-like collection whose `pop` returns the smallest member by `key`,
 * ties broken by insertion order (oldest first).
 *
 * The key of a value must not change while it is in the set: as in the
 * reference, its heap position is fixed when it is added, and may stay fixed
 * even if it is discarded and re-added later.
 */
export class HeapSet<T extends object> {
  /** The sorting key function, as given to the constructor. */
  readonly key: (value: T) => Priority;
  /** Membership: the reference's `_data` set. Its insertion order is the iteration order. */
  private readonly data = new Set<T>();
  /**
   * A binary min-heap of entries, laid out exactly as CPython's `heapq` would, stored
   * column-wise (entry i is `keys[i], incs[i], values[i]`) so that a push allocates nothing.
   */
  private readonly keys: Priority[] = [];
  /**
   * The two elements of each key that follow the prefix all keys share (-Infinity where
   * a key has none), beside the keys: most comparisons are decided by them without
   * following the pointer to the key. Elements within the shared prefix decide
   * nothing: a scheduler's priorities start with the user priority and the graph's
   * generation, the same for every task of a graph.
   */
  private readonly k0: number[] = [];
  private readonly k1: number[] = [];
  /** A key in the heap, and how many leading elements every key in the heap shares with it. */
  private prefixKey: Priority | null = null;
  private prefixLength = 0;
  private readonly incs: number[] = [];
  private readonly values: T[] = [];
  /** The insertion counter; never reset, not even by `clear`. */
  private inc = 0;
  /** True when `heap` is known to be fully sorted, so `sorted()` can skip sorting. */
  private isSorted = true;

  /**
   * Membership kept as this bit of each value's `heapMarks` rather than in `data` (0:
   * in `data`). Marking costs no hash lookup; see {@link HeapSet.marked}.
   */
  private bit = 0;
  /** Number of members when they are marked. */
  private marked = 0;

  /** Create an empty HeapSet ordered by `key`. */
  constructor(key: (value: T) => Priority) {
    this.key = key;
  }

  /**
   * A HeapSet whose members carry their membership as `bit` of their `heapMarks` field
   * (a power of two that no other HeapSet holding the same values uses). Pops come in
   * the same order as from a plain HeapSet; iteration is in heap order, not insertion
   * order. The worker's `ready` and `constrained` queues, which every task passes through.
   */
  static marked<T extends HeapMarked>(key: (value: T) => Priority, bit: number): HeapSet<T> {
    if (!Number.isInteger(Math.log2(bit)) || bit < 1 || bit > 2 ** 30) {
      throw new RangeError(`HeapSet.marked: bit must be a power of two, got ${bit}`);
    }
    const h = new HeapSet<T>(key);
    h.bit = bit;
    return h;
  }

  /** Number of members (not heap entries). */
  get size(): number {
    return this.bit === 0 ? this.data.size : this.marked;
  }

  /** Whether `value` is a member. */
  has(value: T): boolean {
    return this.bit === 0
      ? this.data.has(value)
      : ((value as unknown as HeapMarked).heapMarks & this.bit) !== 0;
  }

  /** Make `value`, which is not one, a member. */
  private mark(value: T): void {
    if (this.bit === 0) {
      this.data.add(value);
    } else {
      (value as unknown as HeapMarked).heapMarks |= this.bit;
      this.marked++;
    }
  }

  /** Make `value` no member; false if it was none. */
  private unmark(value: T): boolean {
    if (this.bit === 0) return this.data.delete(value);
    const v = value as unknown as HeapMarked;
    if ((v.heapMarks & this.bit) === 0) return false;
    v.heapMarks &= ~this.bit;
    this.marked--;
    return true;
  }

  /** Add `value`; a no-op if it is already a member (its position is not refreshed). */
  add(value: T): void {
    if (this.has(value)) return;
    this.heapPush(this.key(value), this.inc, value);
    this.isSorted = false;
    this.mark(value);
    this.inc += 1;
  }

  /**
   * Remove `value` if it is a member. Lazy: its heap entry stays until it
   * surfaces. Clears the heap once the set is empty.
   */
  discard(value: T): void {
    // An empty set always has an empty heap, so only a removal can call for clear().
    if (this.unmark(value) && this.size === 0) this.clear();
  }

  /** Remove `value`; throws KeyError if it is not a member (like `MutableSet.remove`). */
  remove(value: T): void {
    if (!this.has(value)) throw new KeyError(value);
    this.discard(value);
  }

  /** Return the smallest member without removing it. Throws KeyError if empty. */
  peek(): T {
    if (this.size === 0) throw new KeyError(undefined, "peek into empty set");
    const values = this.values;
    for (;;) {
      const value = values[0];
      if (this.has(value)) return value;
      this.heapPop();
      this.isSorted = false;
    }
  }

  /**
   * Iterate over the `n` smallest members without removing them: O(1) for
   * `n === 1`, otherwise it sorts the heap (lazily, on first iteration, like
   * the reference's generator).
   */
  *peekn(n: number): Generator<T, void, undefined> {
    if (n <= 0 || this.size === 0) return;
    if (n === 1) {
      yield this.peek();
    } else {
      let i = 0;
      for (const v of this.iterSorted()) {
        // islice(self.sorted(), n): stop before pulling the (n+1)-th item.
        yield v;
        if (++i >= n) return;
      }
    }
  }

  /** Remove and return the smallest member. Throws KeyError if empty. */
  pop(): T {
    if (this.size === 0) throw new KeyError(undefined, "pop from an empty set");
    for (;;) {
      const value = this.heapPop();
      this.isSorted = false;
      // A valid entry is one whose value is a member: unmark tests and removes at once.
      if (this.unmark(value)) {
        if (this.size === 0) this.clear();
        return value;
      }
    }
  }

  /**
   * Return one of the largest members (not necessarily the largest!) without
   * removing it: the value of the last valid heap entry. It is guaranteed to be
   * `>= peek()`. Throws KeyError if empty.
   */
  peekright(): T {
    if (this.size === 0) throw new KeyError(undefined, "peek into empty set");
    const values = this.values;
    for (;;) {
      const value = values[values.length - 1];
      if (this.has(value)) return value;
      this.keys.pop();
      this.k0.pop();
      this.k1.pop();
      this.incs.pop();
      values.pop();
    }
  }

  /**
   * Remove and return one of the largest members (not necessarily the
   * largest!), as `peekright` picks it. Throws KeyError if empty.
   */
  popright(): T {
    if (this.size === 0) throw new KeyError(undefined, "pop from an empty set");
    for (;;) {
      this.keys.pop();
      this.k0.pop();
      this.k1.pop();
      this.incs.pop();
      const value = this.values.pop() as T;
      if (this.unmark(value)) {
        if (this.size === 0) this.clear();
        return value;
      }
    }
  }

  /**
   * Iterate over all members in insertion order: the port's deterministic
   * stand-in for Python's set order (in heap order for a {@link HeapSet.marked} one).
   */
  [Symbol.iterator](): IterableIterator<T> {
    return this.bit === 0 ? this.data.values() : this.entryMembers();
  }

  /**
   * All members from smallest to largest by key and insertion order. Sorts
   * the heap in place (a sorted array is a valid heap), as the reference does.
   */
  sorted(): T[] {
    return Array.from(this.iterSorted());
  }

  /** Remove all members and all heap entries. The insertion counter is kept. */
  clear(): void {
    // Set.prototype.clear allocates a new table even for an empty set, and this runs
    // each time the last member is popped.
    if (this.data.size > 0) this.data.clear();
    if (this.marked > 0) {
      for (const value of this.values) this.unmark(value);
    }
    if (this.values.length > 0) {
      this.keys.length = 0;
      this.k0.length = 0;
      this.k1.length = 0;
      this.incs.length = 0;
      this.values.length = 0;
    }
    // The next keys may share a longer prefix (a new graph's generation, say).
    this.prefixKey = null;
    this.isSorted = true;
  }

  /** The reference's `sorted()` generator: sort once, then yield valid entries, deduplicated. */
  private *iterSorted(): Generator<T, void, undefined> {
    if (!this.isSorted) {
      this.sortHeap();
      this.isSorted = true;
    }
    yield* this.entryMembers();
  }

  /** The values of valid entries, each once, in heap order. */
  private *entryMembers(): Generator<T, void, undefined> {
    const seen = new Set<T>();
    const values = this.values;
    // Index-based like Python's list iterator: it tolerates mutation between yields.
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (this.has(value) && !seen.has(value)) {
        yield value;
        seen.add(value);
      }
    }
  }

  /** `heap.sort()` on the entry tuples (rare: only `sorted()` and `peekn(n > 1)`). */
  private sortHeap(): void {
    const { keys, incs, values } = this;
    const entries: Entry<T>[] = [];
    for (let i = 0; i < values.length; i++) {
      entries.push({ key: keys[i], inc: incs[i], value: values[i] });
    }
    entries.sort(entryCompare);
    for (let i = 0; i < entries.length; i++) {
      keys[i] = entries[i].key;
      incs[i] = entries[i].inc;
      values[i] = entries[i].value;
    }
    this.cacheElements();
  }

  /** Narrow the shared prefix to what `key` shares with it, recaching if it shrinks. */
  private sharePrefix(key: Priority): void {
    const ref = this.prefixKey;
    if (ref === null) {
      this.prefixKey = key;
      this.prefixLength = key.length;
      return;
    }
    const n = this.prefixLength;
    let i = 0;
    while (i < n && i < key.length && key[i] === ref[i]) i++;
    if (i < n) {
      this.prefixLength = i;
      this.cacheElements();
    }
  }

  /** Recompute every entry's cached elements after the shared prefix. */
  private cacheElements(): void {
    const { keys, k0, k1 } = this;
    const at = this.prefixLength;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      k0[i] = elementOrBottom(key, at);
      k1[i] = elementOrBottom(key, at + 1);
    }
  }

  /** Python's `<` on the entries at `i` and `j`: by key, then counter (unique). */
  private less(i: number, j: number): boolean {
    const k0 = this.k0;
    const k1 = this.k1;
    if (k0[i] !== k0[j]) return k0[i] < k0[j];
    if (k1[i] !== k1[j]) return k1[i] < k1[j];
    const a = this.keys[i];
    const b = this.keys[j];
    if (a !== b) {
      const c = comparePriority(a, b);
      if (c !== 0) return c < 0;
    }
    return this.incs[i] < this.incs[j];
  }

  /** `heapq.heappush`. */
  private heapPush(key: Priority, inc: number, value: T): void {
    this.sharePrefix(key);
    const at = this.prefixLength;
    this.keys.push(key);
    this.k0.push(elementOrBottom(key, at));
    this.k1.push(elementOrBottom(key, at + 1));
    this.incs.push(inc);
    this.values.push(value);
    this.siftDown(0, this.values.length - 1);
  }

  /** `heapq.heappop`, returning the popped entry's value; the heap must be non-empty. */
  private heapPop(): T {
    const { keys, k0, k1, incs, values } = this;
    const lastKey = keys.pop() as Priority;
    const last0 = k0.pop() as number;
    const last1 = k1.pop() as number;
    const lastInc = incs.pop() as number;
    const lastValue = values.pop() as T;
    if (values.length > 0) {
      const top = values[0];
      keys[0] = lastKey;
      k0[0] = last0;
      k1[0] = last1;
      incs[0] = lastInc;
      values[0] = lastValue;
      this.siftUp(0);
      return top;
    }
    return lastValue;
  }

  /** `heapq._siftdown`: move the entry at `pos` up towards `start` until its parent is smaller. */
  private siftDown(start: number, pos: number): void {
    const { keys, k0, k1, incs, values } = this;
    const key = keys[pos];
    const x0 = k0[pos];
    const x1 = k1[pos];
    const inc = incs[pos];
    const value = values[pos];
    while (pos > start) {
      const parentPos = (pos - 1) >> 1;
      const pk = keys[parentPos];
      const p0 = k0[parentPos];
      const p1 = k1[parentPos];
      let less: boolean;
      if (x0 !== p0) {
        less = x0 < p0;
      } else if (x1 !== p1) {
        less = x1 < p1;
      } else if (key !== pk) {
        const c = comparePriority(key, pk);
        less = c !== 0 ? c < 0 : inc < incs[parentPos];
      } else {
        less = inc < incs[parentPos];
      }
      if (less) {
        keys[pos] = pk;
        k0[pos] = p0;
        k1[pos] = p1;
        incs[pos] = incs[parentPos];
        values[pos] = values[parentPos];
        pos = parentPos;
        continue;
      }
      break;
    }
    keys[pos] = key;
    k0[pos] = x0;
    k1[pos] = x1;
    incs[pos] = inc;
    values[pos] = value;
  }

  /**
   * `heapq._siftup`: move the smaller child up until reaching a leaf, put the
   * entry there, then sift it back down (CPython's bottom-up variant, which
   * determines the exact array layout).
   */
  private siftUp(pos: number): void {
    const { keys, k0, k1, incs, values } = this;
    const end = values.length;
    const start = pos;
    const key = keys[pos];
    const x0 = k0[pos];
    const x1 = k1[pos];
    const inc = incs[pos];
    const value = values[pos];
    let child = 2 * pos + 1;
    while (child < end) {
      const right = child + 1;
      if (right < end && !this.less(child, right)) child = right;
      keys[pos] = keys[child];
      k0[pos] = k0[child];
      k1[pos] = k1[child];
      incs[pos] = incs[child];
      values[pos] = values[child];
      pos = child;
      child = 2 * pos + 1;
    }
    keys[pos] = key;
    k0[pos] = x0;
    k1[pos] = x1;
    incs[pos] = inc;
    values[pos] = value;
    this.siftDown(start, pos);
  }
}
