/**
 * The scheduler's bounded transition log, stored flat: six slots per record
 * in one array that grows on demand (doubling) up to `maxlen` records and then
 * becomes a ring, so that logging a transition allocates nothing. Records are
 * materialised as {@link TransitionLogEntry} tuples only when read (stories,
 * tests, dumps).
 */

import type { LoggedRecs, TransitionLogEntry } from "./story.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

const FIELDS = 6;
const INITIAL_RECORDS = 64;

/** A `collections.deque(maxlen=n)` of transition records, oldest first. */
export class TransitionLog implements Iterable<TransitionLogEntry> {
  /** Maximum number of records kept. */
  readonly maxlen: number;
  private slots: unknown[] = [];
  /** Capacity in records (`slots.length / FIELDS`). */
  private capacity = 0;
  /** Index (in records) of the oldest record. */
  private head = 0;
  private count = 0;

  constructor(maxlen: number) {
    if (!(Number.isInteger(maxlen) || maxlen === Number.POSITIVE_INFINITY) || maxlen < 0) {
      throw new RangeError(`maxlen must be a non-negative integer or Infinity, got ${maxlen}`);
    }
    this.maxlen = maxlen;
  }

  /** Number of records held. */
  get length(): number {
    return this.count;
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
    if (this.maxlen === 0) return;
    let at: number;
    if (this.count < this.capacity) {
      at = this.head + this.count;
      if (at >= this.capacity) at -= this.capacity;
      this.count++;
    } else if (this.capacity < this.maxlen) {
      this.grow();
      at = this.count++;
    } else {
      at = this.head;
      this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    }
    const s = this.slots;
    const i = at * FIELDS;
    s[i] = key;
    s[i + 1] = start;
    s[i + 2] = finish;
    s[i + 3] = recs;
    s[i + 4] = stimulusId;
    s[i + 5] = time;
  }

  /** The records, oldest first, as tuples. */
  toArray(): TransitionLogEntry[] {
    const out: TransitionLogEntry[] = new Array(this.count);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      out[n] = this.entry(at);
      if (++at === this.capacity) at = 0;
    }
    return out;
  }

  /** Iterate oldest to newest. The log must not be modified during iteration. */
  *[Symbol.iterator](): Generator<TransitionLogEntry, void, undefined> {
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      yield this.entry(at);
      if (++at === this.capacity) at = 0;
    }
  }

  /** Remove every record and release the storage. */
  clear(): void {
    this.slots = [];
    this.capacity = 0;
    this.head = 0;
    this.count = 0;
  }

  private entry(at: number): TransitionLogEntry {
    const s = this.slots;
    const i = at * FIELDS;
    return [
      s[i] as string,
      s[i + 1] as SchedulerTaskStateName,
      s[i + 2] as SchedulerTaskStateName,
      s[i + 3] as LoggedRecs,
      s[i + 4] as string,
      s[i + 5] as number,
    ];
  }

  /** Double the capacity (capped at maxlen), unwrapping the ring to start at 0. */
  private grow(): void {
    const capacity = Math.min(this.maxlen, Math.max(INITIAL_RECORDS, this.capacity * 2));
    const old = this.slots;
    const slots: unknown[] = new Array(capacity * FIELDS).fill(undefined);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      for (let f = 0; f < FIELDS; f++) slots[n * FIELDS + f] = old[at * FIELDS + f];
      if (++at === this.capacity) at = 0;
    }
    this.slots = slots;
    this.capacity = capacity;
    this.head = 0;
  }
}
