import type { TaskStateState } from "./taskState.ts";

/**
 * One record of the transition log, a tuple as in the seed. Shapes:
 * - `[key, start, recommended, final, recommendations, stimulusId, time]` for a transition,
 *   where `recommendations` is a `Map<key, finishState>` (not searched by `story`);
 * - `[key, "ensure-task-exists" | "compute-task" | "receive-from-scatter", state, stimulusId, time]`;
 * - `[key, "put-in-memory" | "missing-dep" | "remove-replica" | "cancel-compute", stimulusId, time]`;
 * - `["gather-dependencies", worker, Set<key>, stimulusId, time]`;
 * - `["free-keys", keys[], stimulusId, time]`.
 */
export type LogEntry = readonly unknown[];

/** The recommendations logged with a transition. */
export type LoggedRecs = ReadonlyMap<string, TaskStateState>;

/** Shared by every transition that made no recommendation. */
export const NO_RECS: LoggedRecs = new Map();

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
