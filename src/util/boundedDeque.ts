/**
 * A fixed-capacity log that forgets its oldest entries: Python's
 * `collections.deque(maxlen=n)` as used by the reference for transition logs
 * and the worker's `log`/`stimulus_log`.
 *
 * Those logs are created with large limits (e.g. 100,000) but are often short
 * or empty, so storage grows on demand (doubling) up to `maxlen` and only then
 * becomes a ring buffer.
 */

/** Smallest storage allocated by the first push. */
const INITIAL_CAPACITY = 16;

/**
 * A ring buffer holding at most `maxlen` items; pushing onto a full deque
 * evicts the oldest item. Iteration runs oldest to newest.
 */
export class BoundedDeque<T> implements Iterable<T> {
  /** Maximum number of items kept (a non-negative integer, or Infinity for unbounded). */
  readonly maxlen: number;
  /** Storage; its length is the current capacity. The ring wraps only when capacity is maxlen. */
  private buf: (T | undefined)[] = [];
  /** Index of the oldest item in `buf`. */
  private head = 0;
  /** Number of items held. */
  private count = 0;

  /** Create an empty deque keeping at most `maxlen` items. */
  constructor(maxlen: number) {
    if (!(Number.isInteger(maxlen) || maxlen === Number.POSITIVE_INFINITY) || maxlen < 0) {
      throw new RangeError(`maxlen must be a non-negative integer or Infinity, got ${maxlen}`);
    }
    this.maxlen = maxlen;
  }

  /** Number of items held. */
  get length(): number {
    return this.count;
  }

  /** Append `value` as the newest item, evicting the oldest if the deque is full. */
  push(value: T): void {
    const maxlen = this.maxlen;
    if (maxlen === 0) return;
    let buf = this.buf;
    if (this.count === buf.length) {
      if (buf.length < maxlen) {
        buf = this.grow();
      } else {
        // Full at maxlen: overwrite the oldest and advance the head.
        buf[this.head] = value;
        this.head = this.head + 1 === buf.length ? 0 : this.head + 1;
        return;
      }
    }
    let at = this.head + this.count;
    if (at >= buf.length) at -= buf.length;
    buf[at] = value;
    this.count++;
  }

  /**
   * The item at position `index` counted from the oldest (0); negative indices
   * count from the newest (-1), like `Array.prototype.at`. Undefined when out
   * of range.
   */
  at(index: number): T | undefined {
    let i = Math.trunc(index);
    if (i < 0) i += this.count;
    if (i < 0 || i >= this.count || Number.isNaN(i)) return undefined;
    let at = this.head + i;
    if (at >= this.buf.length) at -= this.buf.length;
    return this.buf[at];
  }

  /** Remove all items and release the storage. */
  clear(): void {
    this.buf = [];
    this.head = 0;
    this.count = 0;
  }

  /** The items, oldest first, as a new array. */
  toArray(): T[] {
    const out = new Array<T>(this.count);
    const buf = this.buf;
    let at = this.head;
    for (let i = 0; i < this.count; i++) {
      out[i] = buf[at] as T;
      if (++at === buf.length) at = 0;
    }
    return out;
  }

  /** Iterate oldest to newest. The deque must not be modified during iteration. */
  *[Symbol.iterator](): Generator<T, void, undefined> {
    const buf = this.buf;
    let at = this.head;
    for (let i = 0; i < this.count; i++) {
      yield buf[at] as T;
      if (++at === buf.length) at = 0;
    }
  }

  /** Enlarge storage (double, capped at maxlen), unwrapping the ring to start at 0. */
  private grow(): (T | undefined)[] {
    const old = this.buf;
    const capacity = Math.min(this.maxlen, Math.max(INITIAL_CAPACITY, old.length * 2));
    const buf = new Array<T | undefined>(capacity);
    let at = this.head;
    for (let i = 0; i < this.count; i++) {
      buf[i] = old[at];
      if (++at === old.length) at = 0;
    }
    this.buf = buf;
    this.head = 0;
    return buf;
  }
}
