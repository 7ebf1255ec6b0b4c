import { WORKER_LOG_TAGS } from "../protocol/clusterDump.ts";
import { formatLogEntry } from "../worker/state/errors.ts";

/**
 * Records of a dumped worker log that the Worker writes, not its WorkerState: a
 * replay of the state machine does not produce them, so they are not compared.
 * (`gather-dependencies` is the WorkerState's.)
 */
export const SHELL_LOG_TAGS: ReadonlySet<string> = new Set(
  [...WORKER_LOG_TAGS].filter((tag) => tag !== "gather-dependencies"),
);

/** Whether a dumped log record was written by the Worker rather than its WorkerState. */
export function isShellRecord(entry: readonly unknown[]): boolean {
  return typeof entry[0] === "string" && SHELL_LOG_TAGS.has(entry[0]) && entry.length === 5;
}

/** Records that say in which state a stimulus found (or created) a task. */
const CREATION_TAGS: ReadonlySet<string> = new Set([
  "compute-task",
  "ensure-task-exists",
  "receive-from-scatter",
]);

/**
 * A worker log record (dumped or replayed) reduced to what a replay must reproduce:
 * the time is dropped, and what holds Python's set order — the recommendations of a
 * transition, the keys of `gather-dependencies` and `free-keys` — is sorted.
 */
export interface ComparableRecord {
  /** Its stimulus id (the second-to-last field of every shape). */
  readonly stimulusId: string;
  /** `[key, start, recommended, final, recs, stimulus_id, time]`. */
  readonly isTransition: boolean;
  /** The task of a transition or task record, else null. */
  readonly key: string | null;
  /** The peer of a `gather-dependencies` record, else null. */
  readonly gatherFrom: string | null;
  /** Every task key the record names (its key, or its key list). */
  readonly keys: readonly string[];
  /**
   * The state of a `compute-task`/`ensure-task-exists`/`receive-from-scatter` record
   * (the task's state when the stimulus found it), else null.
   */
  readonly createdIn: string | null;
  /** Canonical JSON of the reduced record: equal strings, equal records. */
  readonly canonical: string;
  /** The record as Python prints a tuple, without its time. */
  readonly display: string;
  /** Its time, or null. */
  readonly time: number | null;
}

/** `{key: state}` of a logged transition: a LoggedRecs (`toMap()`), a Map or a plain object. */
function recommendationPairs(v: unknown): [string, string][] | null {
  let entries: Iterable<[unknown, unknown]>;
  if (v instanceof Map) entries = v;
  else if (typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Set)) {
    const toMap = (v as { toMap?: unknown }).toMap;
    entries =
      typeof toMap === "function"
        ? (toMap.call(v) as Map<unknown, unknown>)
        : Object.entries(v as Record<string, unknown>);
  } else return null;
  const out: [string, string][] = [];
  for (const [k, s] of entries) out.push([String(k), String(s)]);
  return out;
}

function stringList(v: unknown): string[] | null {
  if (v instanceof Set || Array.isArray(v)) {
    const out: string[] = [];
    for (const x of v) out.push(String(x));
    return out;
  }
  return null;
}

function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byFirst(a: [string, string], b: [string, string]): number {
  return byString(a[0], b[0]);
}

/** A plain JSON-able copy of a record field (Sets as lists, Maps and LoggedRecs as objects). */
function plain(v: unknown): unknown {
  if (v instanceof Set) return [...v].map(plain);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), plain(x)]));
  if (typeof v === "object" && v !== null && !(v instanceof Uint8Array)) {
    const toMap = (v as { toMap?: unknown }).toMap;
    if (typeof toMap === "function") return plain(toMap.call(v));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  // The dump keeps integers beyond 2**53 as bigints, which JSON.stringify refuses (and
  // a JSON number would round): their exact digits, as a string.
  if (typeof v === "bigint") return v.toString();
  return v === undefined ? null : v;
}

/** Reduces one record of a worker log (see {@link ComparableRecord}). */
export function comparableRecord(entry: readonly unknown[]): ComparableRecord {
  const n = entry.length;
  const time = typeof entry[n - 1] === "number" ? (entry[n - 1] as number) : null;
  const body = entry.slice(0, n - 1);
  const stimulusId = String(entry[n - 2]);
  const recs = n === 7 ? recommendationPairs(entry[4]) : null;
  const isTransition = recs !== null;
  let reduced: unknown[];
  let key: string | null = null;
  let gatherFrom: string | null = null;
  let keys: string[];
  if (isTransition) {
    key = String(entry[0]);
    keys = [key];
    reduced = [key, entry[1], entry[2], entry[3], recs.sort(byFirst), stimulusId];
  } else if (entry[0] === "free-keys" && n === 4) {
    keys = (stringList(entry[1]) ?? []).sort(byString);
    reduced = ["free-keys", keys, stimulusId];
  } else if (typeof entry[0] === "string" && WORKER_LOG_TAGS.has(entry[0]) && n === 5) {
    gatherFrom = entry[0] === "gather-dependencies" ? String(entry[1]) : null;
    keys = (stringList(entry[2]) ?? []).sort(byString);
    reduced = [entry[0], entry[1], keys, stimulusId];
  } else {
    key = typeof entry[0] === "string" ? entry[0] : null;
    keys = key === null ? [] : [key];
    reduced = body.map(plain);
  }
  const createdIn =
    !isTransition && n === 5 && typeof entry[1] === "string" && CREATION_TAGS.has(entry[1])
      ? String(entry[2])
      : null;
  return {
    stimulusId,
    isTransition,
    createdIn,
    key,
    gatherFrom,
    keys,
    canonical: JSON.stringify(reduced.map(plain)),
    display: formatLogEntry(body),
    time,
  };
}

/**
 * A record's fields as plain JSON values (Sets as lists, recommendations as objects,
 * integers beyond 2**53 as strings of their digits).
 */
export function plainRecord(entry: readonly unknown[]): unknown[] {
  return entry.map(plain);
}
