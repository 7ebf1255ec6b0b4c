import type { TaskStateState } from "./taskState.ts";

/**
 * One record of the transition log, a tuple as in the seed. Shapes:
 * - `[key, start, recommended, final, recommendations, stimulusId, time]` for a transition,
 *   where `recommendations` is a {@link LoggedRecs} (not searched by `story`);
 * - `[key, "ensure-task-exists" | "compute-task" | "receive-from-scatter", state, stimulusId, time]`;
 * - `[key, "put-in-memory" | "missing-dep" | "remove-replica" | "cancel-compute", stimulusId, time]`;
 * - `["gather-dependencies", worker, Set<key>, stimulusId, time]`;
 * - `["free-keys", keys[], stimulusId, time]`.
 */
export type LogEntry = readonly unknown[];

/**
 * The recommendations logged with a transition, `{key: finish state}`: keys and states
 * alternate in one flat array, which is cheap to make on the hot path.
 */
export class LoggedRecs {
  /**
   * One recommendation is kept in `key`/`state` (the common case, without an array);
   * more are kept as alternating keys and states in `flat`.
   */
  constructor(
    private readonly key: string | null,
    private readonly state: TaskStateState | null,
    private readonly flat: readonly string[] | null = null,
  ) {}

  get size(): number {
    if (this.flat !== null) return this.flat.length >> 1;
    return this.key === null ? 0 : 1;
  }

  /** As a Map, in the order the recommendations were made. */
  toMap(): Map<string, TaskStateState> {
    const out = new Map<string, TaskStateState>();
    if (this.flat !== null) {
      for (let i = 0; i < this.flat.length; i += 2)
        out.set(this.flat[i], this.flat[i + 1] as TaskStateState);
    } else if (this.key !== null) {
      out.set(this.key, this.state as TaskStateState);
    }
    return out;
  }

  /** As a plain object (for JSON). */
  toJSON(): Record<string, TaskStateState> {
    return Object.fromEntries(this.toMap());
  }
}

/** Shared by every transition that made no recommendation. */
export const NO_RECS = new LoggedRecs(null, null);

/**
 * `worker_story`: the records that mention any of `keysOrStimuli`, either as an element
 * of the record or inside an element that is an array or a set.
 */
export function workerStory(
  keysOrStimuli: ReadonlySet<string>,
  log: Iterable<LogEntry>,
): LogEntry[] {
  const out: LogEntry[] = [];
  for (const msg of log) {
    if (mentions(msg, keysOrStimuli)) out.push(msg);
  }
  return out;
}

function mentions(msg: LogEntry, keys: ReadonlySet<string>): boolean {
  for (const c of msg) {
    if (typeof c === "string") {
      if (keys.has(c)) return true;
    } else if (Array.isArray(c)) {
      for (const x of c) if (typeof x === "string" && keys.has(x)) return true;
    } else if (c instanceof Set) {
      for (const k of keys) if (c.has(k)) return true;
    }
  }
  return false;
}

/** Seven fields, and an eighth slot for the state of a single logged recommendation. */
const WIDTH = 8;
const RECORD_FIELDS = 7;
/** Width marking a transition record whose recommendation is stored inline. */
const TRANSITION_INLINE = 8;
/** Flag on a record's width: its last field, the time, is in the `times` column. */
const TIMED = 0x10;
const WIDTH_MASK = 0x0f;

/** Records per chunk of storage (a power of two). */
const CHUNK_BITS = 8;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;

/**
 * The transition log: a ring buffer of up to `maxlen` records, like the seed's
 * `deque(maxlen=100_000)`. Records are stored column-wise (seven slots a record in a
 * flat array, its time in a Float64Array, its length in a byte), so logging a
 * transition allocates nothing, not even a heap number for the time; iteration gives
 * each record as a tuple. Storage comes in chunks of 256 records, added as the log
 * fills, so that it never copies what it holds (a state machine that logs a few
 * records pays for a few).
 */
export class TransitionLog implements Iterable<LogEntry> {
  private slots: unknown[][] = [];
  private widths: Uint8Array[] = [];
  private times: Float64Array[] = [];
  private head = 0;
  private count = 0;

  constructor(readonly maxlen: number) {}

  get length(): number {
    return this.count;
  }

  /**
   * The record index of a new record, evicting the oldest when full. Until the ring is
   * full, records are appended (the head stays at 0); once full, the oldest record is
   * overwritten.
   */
  private claim(width: number): number {
    const count = this.count;
    let at: number;
    if (count < this.maxlen) {
      if ((count & CHUNK_MASK) === 0) this.addChunk();
      this.count = count + 1;
      at = count;
    } else {
      at = this.head;
      this.head = at + 1 === count ? 0 : at + 1;
    }
    this.widths[at >> CHUNK_BITS][at & CHUNK_MASK] = width;
    return at;
  }

  private addChunk(): void {
    this.slots.push(new Array<unknown>(CHUNK * WIDTH).fill(undefined));
    this.widths.push(new Uint8Array(CHUNK));
    this.times.push(new Float64Array(CHUNK));
  }

  /** Append a record of four fields, the last being the time. */
  add4(a: unknown, b: unknown, c: unknown, time: number): void {
    const at = this.claim(4 | TIMED);
    this.times[at >> CHUNK_BITS][at & CHUNK_MASK] = time;
    const s = this.slots[at >> CHUNK_BITS];
    const i = (at & CHUNK_MASK) * WIDTH;
    s[i] = a;
    s[i + 1] = b;
    s[i + 2] = c;
    // The unused slots are cleared so that an overwritten record keeps nothing alive.
    s[i + 3] = undefined;
    s[i + 4] = undefined;
    s[i + 5] = undefined;
    s[i + 6] = undefined;
    s[i + 7] = undefined;
  }

  /** Append a record of five fields, the last being the time. */
  add5(a: unknown, b: unknown, c: unknown, d: unknown, time: number): void {
    const at = this.claim(5 | TIMED);
    this.times[at >> CHUNK_BITS][at & CHUNK_MASK] = time;
    const s = this.slots[at >> CHUNK_BITS];
    const i = (at & CHUNK_MASK) * WIDTH;
    s[i] = a;
    s[i + 1] = b;
    s[i + 2] = c;
    s[i + 3] = d;
    s[i + 4] = undefined;
    s[i + 5] = undefined;
    s[i + 6] = undefined;
    s[i + 7] = undefined;
  }

  /** Append a record of seven fields (a transition), the last being the time. */
  add7(a: unknown, b: unknown, c: unknown, d: unknown, e: unknown, f: unknown, time: number): void {
    const at = this.claim(7 | TIMED);
    this.times[at >> CHUNK_BITS][at & CHUNK_MASK] = time;
    const s = this.slots[at >> CHUNK_BITS];
    const i = (at & CHUNK_MASK) * WIDTH;
    s[i] = a;
    s[i + 1] = b;
    s[i + 2] = c;
    s[i + 3] = d;
    s[i + 4] = e;
    s[i + 5] = f;
    s[i + 6] = undefined;
    s[i + 7] = undefined;
  }

  /**
   * Append a transition record `[key, start, recommended, final, recs, stimulusId, time]`
   * with a single recommendation `recKey -> recState`, kept inline (no object).
   */
  addTransition1(
    key: string,
    start: string,
    finish: string,
    final: string,
    recKey: string,
    recState: TaskStateState,
    stimulusId: string,
    time: number,
  ): void {
    const at = this.claim(TRANSITION_INLINE | TIMED);
    this.times[at >> CHUNK_BITS][at & CHUNK_MASK] = time;
    const s = this.slots[at >> CHUNK_BITS];
    const i = (at & CHUNK_MASK) * WIDTH;
    s[i] = key;
    s[i + 1] = start;
    s[i + 2] = finish;
    s[i + 3] = final;
    s[i + 4] = recKey;
    s[i + 5] = stimulusId;
    s[i + 6] = undefined;
    s[i + 7] = recState;
  }

  /** Append a record given as a tuple (of at most seven fields). */
  push(entry: LogEntry): void {
    const n = entry.length;
    if (n > RECORD_FIELDS) {
      throw new RangeError(`a log record has at most ${RECORD_FIELDS} fields`);
    }
    const at = this.claim(n);
    const s = this.slots[at >> CHUNK_BITS];
    const i = (at & CHUNK_MASK) * WIDTH;
    for (let j = 0; j < WIDTH; j++) s[i + j] = j < n ? entry[j] : undefined;
  }

  /** The record at `index` (negative counts from the newest), or undefined. */
  at(index: number): LogEntry | undefined {
    let i = Math.trunc(index);
    if (i < 0) i += this.count;
    if (!(i >= 0 && i < this.count)) return undefined;
    let at = this.head + i;
    if (at >= this.count) at -= this.count;
    return this.record(at);
  }

  private record(at: number): LogEntry {
    const flags = this.widths[at >> CHUNK_BITS][at & CHUNK_MASK];
    const time = this.times[at >> CHUNK_BITS][at & CHUNK_MASK];
    const s = this.slots[at >> CHUNK_BITS];
    const base = (at & CHUNK_MASK) * WIDTH;
    if ((flags & WIDTH_MASK) === TRANSITION_INLINE) {
      const recs = new LoggedRecs(s[base + 4] as string, s[base + 7] as TaskStateState);
      return [s[base], s[base + 1], s[base + 2], s[base + 3], recs, s[base + 5], time];
    }
    const w = flags & WIDTH_MASK;
    const out = new Array<unknown>(w);
    for (let j = 0; j < w; j++) out[j] = s[base + j];
    if (flags & TIMED) out[w - 1] = time;
    return out;
  }

  clear(): void {
    this.slots = [];
    this.widths = [];
    this.times = [];
    this.head = 0;
    this.count = 0;
  }

  toArray(): LogEntry[] {
    return [...this];
  }

  *[Symbol.iterator](): IterableIterator<LogEntry> {
    const count = this.count;
    let at = this.head;
    for (let i = 0; i < count; i++) {
      yield this.record(at);
      if (++at === count) at = 0;
    }
  }
}
