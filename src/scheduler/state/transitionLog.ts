/**
 * The scheduler's bounded logs, stored flat: a fixed number of slots per
 * record in one array that grows on demand (doubling) up to `maxlen` records
 * and then becomes a ring, so that logging allocates nothing. Records are
 * materialised (tuples, objects) only when read: stories, tests, dumps.
 */

import type { LoggedRecs, TransitionLogEntry } from "./story.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

const INITIAL_RECORDS = 64;

/** A `collections.deque(maxlen=n)` of records of `fields` slots each, oldest first. */
abstract class FlatRing<R> implements Iterable<R> {
  /** Maximum number of records kept. */
  readonly maxlen: number;
  protected slots: unknown[] = [];
  /** Capacity in records (`slots.length / fields`). */
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

  /** The first slot of a new record (evicting the oldest when full), or -1 if nothing is kept. */
  protected claim(): number {
    if (this.maxlen === 0) return -1;
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
    return at * this.fields;
  }

  /** The record whose first slot is `i`. */
  protected abstract read(i: number): R;

  /** The records, oldest first. */
  toArray(): R[] {
    const out: R[] = new Array(this.count);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      out[n] = this.read(at * this.fields);
      if (++at === this.capacity) at = 0;
    }
    return out;
  }

  /** Iterate oldest to newest. The log must not be modified during iteration. */
  *[Symbol.iterator](): Generator<R, void, undefined> {
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      yield this.read(at * this.fields);
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

  /** Double the capacity (capped at maxlen), unwrapping the ring to start at 0. */
  private grow(): void {
    const f = this.fields;
    const capacity = Math.min(this.maxlen, Math.max(INITIAL_RECORDS, this.capacity * 2));
    const old = this.slots;
    const slots: unknown[] = new Array(capacity * f).fill(undefined);
    let at = this.head;
    for (let n = 0; n < this.count; n++) {
      for (let k = 0; k < f; k++) slots[n * f + k] = old[at * f + k];
      if (++at === this.capacity) at = 0;
    }
    this.slots = slots;
    this.capacity = capacity;
    this.head = 0;
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
    const i = this.claim();
    if (i < 0) return;
    const s = this.slots;
    s[i] = key;
    s[i + 1] = start;
    s[i + 2] = finish;
    s[i + 3] = recs;
    s[i + 4] = stimulusId;
    s[i + 5] = time;
  }

  protected read(i: number): TransitionLogEntry {
    const s = this.slots;
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
    const i = this.claim();
    if (i < 0) return;
    const s = this.slots;
    s[i] = stimulusId;
    s[i + 1] = kind;
    s[i + 2] = op;
    s[i + 3] = origin;
    s[i + 4] = key;
    s[i + 5] = time;
  }

  protected read(i: number): StimulusRecord {
    const s = this.slots;
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
