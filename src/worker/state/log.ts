import {
  RING_CHUNK,
  RING_CHUNK_BITS,
  RING_CHUNK_MASK,
  TimedFlatRing,
} from "../../util/flatRing.ts";
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

  /** `console.log` of a story shows the `{key: state}` this stands for, not its fields. */
  [Symbol.for("nodejs.util.inspect.custom")](): Record<string, TaskStateState> {
    return this.toJSON();
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

/**
 * The transition log: a ring buffer of up to `maxlen` records, like the seed's
 * `deque(maxlen=100_000)`, stored flat (a {@link TimedFlatRing}): seven slots a record and an
 * eighth for an inline recommendation, its time in a Float64Array column and its length
 * in a byte column, so logging a transition allocates nothing, not even a heap number
 * for the time, and growing copies nothing; iteration gives each record as a tuple.
 */
export class TransitionLog extends TimedFlatRing<LogEntry> {
  private widths: Uint8Array[] = [];

  constructor(maxlen: number) {
    super(maxlen, WIDTH);
  }

  protected override addChunk(): void {
    super.addChunk();
    this.widths.push(new Uint8Array(RING_CHUNK));
  }

  protected override clearColumns(): void {
    super.clearColumns();
    this.widths = [];
  }

  /** Claim a record of this width (flags included) and time; its index, or -1. */
  private claimRecord(flags: number, time: number): number {
    const at = this.claim();
    if (at < 0) return at;
    this.widths[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK] = flags;
    this.setTime(at, time);
    return at;
  }

  /** Append a record of four fields, the last being the time. */
  add4(a: unknown, b: unknown, c: unknown, time: number): void {
    const at = this.claimRecord(4 | TIMED, time);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
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
    const at = this.claimRecord(5 | TIMED, time);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
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
    const at = this.claimRecord(7 | TIMED, time);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
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
    const at = this.claimRecord(TRANSITION_INLINE | TIMED, time);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
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
    const at = this.claimRecord(n, 0);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    for (let j = 0; j < WIDTH; j++) s[i + j] = j < n ? entry[j] : undefined;
  }

  protected read(at: number): LogEntry {
    const flags = this.widths[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK];
    const time = this.time(at);
    const s = this.slots(at);
    const base = this.slot(at);
    if ((flags & WIDTH_MASK) === TRANSITION_INLINE) {
      const recs = new LoggedRecs(s[base + 4] as string, s[base + 7] as TaskStateState);
      return [s[base], s[base + 1], s[base + 2], s[base + 3], recs, s[base + 5], time];
    }
    const w = flags & WIDTH_MASK;
    const out = new Array<unknown>(w);
    for (let k = 0; k < w; k++) out[k] = s[base + k];
    if (flags & TIMED) out[w - 1] = time;
    return out;
  }
}
