/**
 * The scheduler's bounded logs, stored flat: a fixed number of slots per
 * record in chunks of {@link CHUNK} records, added on demand up to `maxlen`
 * records; then the records form a ring. Logging allocates nothing (apart
 * from a chunk now and then) and growing copies nothing. Records are
 * materialised (tuples, objects) only when read: stories, tests, dumps.
 */

import type { LoggedRecs, TransitionLogEntry } from "./story.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

/** Records per chunk (a power of two). */
const CHUNK_BITS = 10;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;

/** A `collections.deque(maxlen=n)` of records of `fields` slots each, oldest first. */
abstract class FlatRing<R> implements Iterable<R> {
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
   * Where a new record goes (evicting the oldest when full): sets
   * {@link chunk} and {@link offset}. False if nothing is kept (maxlen 0).
   */
  protected claim(): boolean {
    if (this.maxlen === 0) return false;
    let at: number;
    if (this.count < this.capacity) {
      // Until the ring is full, the records start at 0 (head only moves once full).
      at = this.head + this.count;
      if (at >= this.capacity) at -= this.capacity;
      this.count++;
    } else if (this.capacity < this.maxlen) {
      this.chunks.push(new Array(CHUNK * this.fields).fill(undefined));
      this.capacity = Math.min(this.maxlen, this.chunks.length * CHUNK);
      at = this.count++;
    } else {
      at = this.head;
      this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    }
    this.chunk = this.chunks[at >> CHUNK_BITS];
    this.offset = (at & CHUNK_MASK) * this.fields;
    return true;
  }

  /** The chunk of the record being written or read. */
  protected chunk: unknown[] = [];
  /** Its first slot in {@link chunk}. */
  protected offset = 0;

  /** The record at {@link chunk}, {@link offset}. */
  protected abstract read(): R;

  private readAt(at: number): R {
    this.chunk = this.chunks[at >> CHUNK_BITS];
    this.offset = (at & CHUNK_MASK) * this.fields;
    return this.read();
  }

  /** The records, oldest first. */
  toArray(): R[] {
    const out: R[] = new Array(this.count);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      out[n] = this.readAt(at);
      if (++at === this.capacity) at = 0;
    }
    return out;
  }

  /** Iterate oldest to newest. The log must not be modified during iteration. */
  *[Symbol.iterator](): Generator<R, void, undefined> {
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      yield this.readAt(at);
      if (++at === this.capacity) at = 0;
    }
  }

  /** Remove every record and release the storage. */
  clear(): void {
    this.chunks = [];
    this.chunk = [];
    this.capacity = 0;
    this.head = 0;
    this.count = 0;
  }
}

/** The transition log: `(key, start, finish, recommendations, stimulusId, time)` records. */
export class TransitionLog extends FlatRing<TransitionLogEntry> {
  constructor(maxlen: number) {
    super(maxlen, 6);
  }

  /** Append a record, evicting the oldest when full. */
  push(
    key: string,
    start: SchedulerTaskStateName,
    finish: SchedulerTaskStateName,
    recs: LoggedRecs,
    stimulusId: string,
    time: number,
  ): void {
    if (!this.claim()) return;
    const s = this.chunk;
    const i = this.offset;
    s[i] = key;
    s[i + 1] = start;
    s[i + 2] = finish;
    s[i + 3] = recs;
    s[i + 4] = stimulusId;
    s[i + 5] = time;
  }

  protected read(): TransitionLogEntry {
    const s = this.chunk;
    const i = this.offset;
    return [
      s[i] as string,
      s[i + 1] as SchedulerTaskStateName,
      s[i + 2] as SchedulerTaskStateName,
      s[i + 3] as LoggedRecs,
      s[i + 4] as string,
      s[i + 5] as number,
    ];
  }
}

/** A compact record of one handled stimulus, for `SchedulerState.stimulusLog`. */
export interface StimulusRecord {
  readonly stimulusId: string;
  /** The event kind. */
  readonly kind: "worker-message" | "client-message" | "remove-worker" | "steal-request";
  /** The message op, for wrapped messages (`task-finished`, `update-graph`, …); else null. */
  readonly op: string | null;
  /** The worker or client it came from, or the worker it concerns. */
  readonly origin: string;
  /** The key it concerns, if one. */
  readonly key: string | null;
  readonly time: number;
}

/** The stimulus log: one {@link StimulusRecord} per handled stimulus. */
export class StimulusLog extends FlatRing<StimulusRecord> {
  constructor(maxlen: number) {
    super(maxlen, 6);
  }

  /** Append a record, evicting the oldest when full. */
  push(
    stimulusId: string,
    kind: StimulusRecord["kind"],
    op: string | null,
    origin: string,
    key: string | null,
    time: number,
  ): void {
    if (!this.claim()) return;
    const s = this.chunk;
    const i = this.offset;
    s[i] = stimulusId;
    s[i + 1] = kind;
    s[i + 2] = op;
    s[i + 3] = origin;
    s[i + 4] = key;
    s[i + 5] = time;
  }

  protected read(): StimulusRecord {
    const s = this.chunk;
    const i = this.offset;
    return {
      stimulusId: s[i] as string,
      kind: s[i + 1] as StimulusRecord["kind"],
      op: s[i + 2] as string | null,
      origin: s[i + 3] as string,
      key: s[i + 4] as string | null,
      time: s[i + 5] as number,
    };
  }
}
