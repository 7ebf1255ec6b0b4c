/**
 * A `collections.deque(maxlen=n)` of fixed-size records stored flat: `fields` slots per
 * record in chunks of {@link RING_CHUNK} records, added on demand up to `maxlen` records;
 * then the records form a ring and the oldest is overwritten. Appending allocates
 * nothing (apart from a chunk now and then) and growing copies nothing. Records are
 * materialised (tuples, objects) only when read. The transition logs of the worker and
 * scheduler state machines are built on it.
 */

/** Records per chunk (a power of two): 256, so a short-lived log stays small. */
export const RING_CHUNK_BITS = 8;
export const RING_CHUNK = 1 << RING_CHUNK_BITS;
export const RING_CHUNK_MASK = RING_CHUNK - 1;

/**
 * A bounded deque of records of `fields` slots each, stored flat as the module comment
 * says: a subclass writes a record's slots (`claim`, `slots`, `slot`) and reads them back
 * as an `R` (`read`). Iterates oldest first.
 */
export abstract class FlatRing<R> implements Iterable<R> {
  /** Maximum number of records kept. */
  readonly maxlen: number;
  private chunks: unknown[][] = [];
  /** Records the chunks can hold, at most maxlen. */
  private capacity = 0;
  /** Index (in records) of the oldest record. */
  private head = 0;
  private count = 0;

  constructor(
    maxlen: number,
    private readonly fields: number,
  ) {
    if (!(Number.isInteger(maxlen) || maxlen === Number.POSITIVE_INFINITY) || maxlen < 0) {
      throw new RangeError(`maxlen must be a non-negative integer or Infinity, got ${maxlen}`);
    }
    this.maxlen = maxlen;
  }

  /** Number of records held. */
  get length(): number {
    return this.count;
  }

  /**
   * The index of a new record (evicting the oldest when full), or -1 if nothing is kept
   * (maxlen 0). Its slots are `slots(at)[slot(at) + 0 .. fields - 1]`.
   */
  protected claim(): number {
    if (this.maxlen === 0) return -1;
    let at: number;
    if (this.count < this.capacity) {
      // Until the ring is full, the records start at 0 (head only moves once full).
      at = this.head + this.count;
      if (at >= this.capacity) at -= this.capacity;
      this.count++;
    } else if (this.capacity < this.maxlen) {
      this.chunks.push(new Array(RING_CHUNK * this.fields).fill(undefined));
      this.addChunk();
      this.capacity = Math.min(this.maxlen, this.chunks.length * RING_CHUNK);
      at = this.count++;
    } else {
      at = this.head;
      this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    }
    return at;
  }

  /** The chunk of slots holding record `at`. */
  protected slots(at: number): unknown[] {
    return this.chunks[at >> RING_CHUNK_BITS];
  }

  /** The first slot of record `at` in its chunk. */
  protected slot(at: number): number {
    return (at & RING_CHUNK_MASK) * this.fields;
  }

  /** A chunk of slots was added: subclasses add the chunks of their own columns here. */
  protected addChunk(): void {}

  /** Subclasses release their own columns here. */
  protected clearColumns(): void {}

  /** Record `at` as the caller sees it. */
  protected abstract read(at: number): R;

  /** The record at `index` (negative counts from the newest), or undefined. */
  at(index: number): R | undefined {
    let i = Math.trunc(index);
    if (i < 0) i += this.count;
    if (!(i >= 0 && i < this.count)) return undefined;
    let at = this.head + i;
    if (at >= this.capacity) at -= this.capacity;
    return this.read(at);
  }

  /** The records, oldest first. */
  toArray(): R[] {
    const out: R[] = new Array(this.count);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      out[n] = this.read(at);
      if (++at === this.capacity) at = 0;
    }
    return out;
  }

  /** Iterate oldest to newest. The log must not be modified during iteration. */
  *[Symbol.iterator](): Generator<R, void, undefined> {
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      yield this.read(at);
      if (++at === this.capacity) at = 0;
    }
  }

  /** Remove every record and release the storage. */
  clear(): void {
    this.chunks = [];
    this.capacity = 0;
    this.head = 0;
    this.count = 0;
    this.clearColumns();
  }
}

/**
 * A {@link FlatRing} whose records carry a time, kept in a Float64Array column: a
 * time stored in a plain slot would be boxed, a heap number per record living as
 * long as the record (so promoted, and later collected as old garbage).
 */
export abstract class TimedFlatRing<R> extends FlatRing<R> {
  private times: Float64Array[] = [];

  protected override addChunk(): void {
    this.times.push(new Float64Array(RING_CHUNK));
  }

  protected override clearColumns(): void {
    this.times = [];
  }

  /** Set the time of record `at`. */
  protected setTime(at: number, time: number): void {
    this.times[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK] = time;
  }

  /** The time of record `at`. */
  protected time(at: number): number {
    return this.times[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK];
  }
}
