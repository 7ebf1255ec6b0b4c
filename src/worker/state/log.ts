import {
  RING_CHUNK,
  RING_CHUNK_BITS,
  RING_CHUNK_MASK,
  TimedFlatRing,
} from "../../util/flatRing.ts";
import { stateIndex, TASK_STATES, type TaskStateState } from "./taskState.ts";

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

  /** How many recommendations were made. */
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

/** Pointer slots a record: a transition's key, recommendation(s) and stimulus id fit. */
const WIDTH = 4;
/** The most fields a record given as a tuple (or to `add7`) may have. */
const RECORD_FIELDS = 7;

/*
 * A record's meta word (one Uint32 a record, beside the slots):
 * - bits 0-3, its kind: 1-4 for a record of that many fields held in the slots, or one
 *   of the kinds below;
 * - bit 4, TIMED: its last field, the time, is in the `times` column rather than a slot;
 * - bits 8-23, for a transition, its states as indices in TASK_STATES, four bits each:
 *   start, recommended, final, and the state of an inline recommendation.
 * Four slots of 8 bytes and the states as numbers: a record is half a cache line, where
 * eight slots with the states as pointers made a transition log of 100,000 records
 * 6.4 MB, written through the processor's cache at every transition.
 */
/** `[key, start, recommended, final, {recKey: recState}, stimulusId, time]`: slots key, recKey, stimulusId. */
const TRANSITION_INLINE = 8;
/** `[key, start, recommended, final, recs, stimulusId, time]`: slots key, recs, stimulusId. */
const TRANSITION_RECS = 9;
/** A record of 5 to 7 fields, kept as a frozen tuple in the first slot (rare: `push`, `add7`). */
const BOXED = 10;
const KIND_MASK = 0x0f;
const TIMED = 0x10;
const STATES_SHIFT = 8;

function packStates(
  start: TaskStateState,
  finish: TaskStateState,
  final: TaskStateState,
  rec: TaskStateState | null,
): number {
  const r = rec === null ? 0 : stateIndex(rec);
  return (
    ((stateIndex(start) | (stateIndex(finish) << 4) | (stateIndex(final) << 8) | (r << 12)) <<
      STATES_SHIFT) |
    TIMED
  );
}

/** The state packed at `shift` (0, 4, 8 or 12) in a meta word. */
function unpackState(meta: number, shift: number): TaskStateState {
  return TASK_STATES[(meta >>> (STATES_SHIFT + shift)) & 0x0f];
}

/**
 * The transition log: a ring buffer of up to `maxlen` records, like the seed's
 * `deque(maxlen=100_000)`, stored flat (a {@link TimedFlatRing}): four pointer slots a
 * record, its time in a Float64Array column and its kind and a transition's states in a
 * Uint32Array column, so logging a transition allocates nothing, not even a heap number
 * for the time, and growing copies nothing; iteration gives each record as a tuple.
 */
export class TransitionLog extends TimedFlatRing<LogEntry> {
  private metas: Uint32Array[] = [];

  constructor(maxlen: number) {
    super(maxlen, WIDTH);
  }

  protected override addChunk(): void {
    super.addChunk();
    this.metas.push(new Uint32Array(RING_CHUNK));
  }

  protected override clearColumns(): void {
    super.clearColumns();
    this.metas = [];
  }

  /** Claim a record with this meta word and time; its index, or -1. */
  private claimRecord(meta: number, time: number): number {
    const at = this.claim();
    if (at < 0) return at;
    this.metas[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK] = meta;
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
    // The unused slot is cleared so that an overwritten record keeps nothing alive.
    s[i + 3] = undefined;
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
  }

  /**
   * Append a transition record `[key, start, recommended, final, recs, stimulusId, time]`
   * whose recommendations (none, or more than one) are in `recs`.
   */
  addTransition(
    key: string,
    start: TaskStateState,
    finish: TaskStateState,
    final: TaskStateState,
    recs: LoggedRecs,
    stimulusId: string,
    time: number,
  ): void {
    const at = this.claimRecord(TRANSITION_RECS | packStates(start, finish, final, null), time);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    s[i] = key;
    s[i + 1] = recs;
    s[i + 2] = stimulusId;
    s[i + 3] = undefined;
  }

  /**
   * Append a transition record `[key, start, recommended, final, recs, stimulusId, time]`
   * with a single recommendation `recKey -> recState`, kept inline (no object).
   */
  addTransition1(
    key: string,
    start: TaskStateState,
    finish: TaskStateState,
    final: TaskStateState,
    recKey: string,
    recState: TaskStateState,
    stimulusId: string,
    time: number,
  ): void {
    const at = this.claimRecord(
      TRANSITION_INLINE | packStates(start, finish, final, recState),
      time,
    );
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    s[i] = key;
    s[i + 1] = recKey;
    s[i + 2] = stimulusId;
    s[i + 3] = undefined;
  }

  /** Append a record of seven fields, the last being the time (kept as a tuple). */
  add7(a: unknown, b: unknown, c: unknown, d: unknown, e: unknown, f: unknown, time: number): void {
    this.push([a, b, c, d, e, f, time]);
  }

  /** Append a record given as a tuple (of at most seven fields). */
  push(entry: LogEntry): void {
    const n = entry.length;
    if (n > RECORD_FIELDS) {
      throw new RangeError(`a log record has at most ${RECORD_FIELDS} fields`);
    }
    const at = this.claimRecord(n > WIDTH ? BOXED : n, 0);
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    if (n > WIDTH) {
      s[i] = Object.freeze([...entry]);
      for (let j = 1; j < WIDTH; j++) s[i + j] = undefined;
    } else {
      for (let j = 0; j < WIDTH; j++) s[i + j] = j < n ? entry[j] : undefined;
    }
  }

  protected read(at: number): LogEntry {
    const meta = this.metas[at >> RING_CHUNK_BITS][at & RING_CHUNK_MASK];
    const s = this.slots(at);
    const base = this.slot(at);
    const kind = meta & KIND_MASK;
    if (kind === TRANSITION_INLINE || kind === TRANSITION_RECS) {
      const recs =
        kind === TRANSITION_INLINE
          ? new LoggedRecs(s[base + 1] as string, unpackState(meta, 12))
          : s[base + 1];
      return [
        s[base],
        unpackState(meta, 0),
        unpackState(meta, 4),
        unpackState(meta, 8),
        recs,
        s[base + 2],
        this.time(at),
      ];
    }
    if (kind === BOXED) return [...(s[base] as LogEntry)];
    // A timed record's last field is in the times column, the others in the slots.
    const timed = (meta & TIMED) !== 0;
    const out = new Array<unknown>(kind);
    const inSlots = timed ? kind - 1 : kind;
    for (let k = 0; k < inSlots; k++) out[k] = s[base + k];
    if (timed) out[kind - 1] = this.time(at);
    return out;
  }
}
