import { pyKeyRepr, pyRepr } from "../../util/pyString.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

/**
 * The recommendations a transition made, flattened as
 * `[key1, finish1, key2, finish2, …]` (one small array per transition instead of a map).
 */
export type LoggedRecs = readonly string[];

/** Shared by every transition that made no recommendation. */
export const NO_RECS: LoggedRecs = [];

/**
 * One record of the scheduler's transition log, as in Dask's scheduler:
 * `(key, start, finish, recommendations, stimulusId, time)`. `finish` is the
 * state actually reached; a transition made through `released` logs its two
 * legs separately. A confirmed steal logs `processing → processing`.
 */
export type TransitionLogEntry = readonly [
  key: string,
  start: SchedulerTaskStateName,
  finish: SchedulerTaskStateName,
  recommendations: LoggedRecs,
  stimulusId: string,
  time: number,
];

/**
 * Dask's `scheduler_story`: the records whose key, stimulus id, or one of whose
 * recommended keys is in `keysOrStimuli`, oldest first.
 */
export function schedulerStory(
  keysOrStimuli: ReadonlySet<string>,
  log: Iterable<TransitionLogEntry>,
): TransitionLogEntry[] {
  const out: TransitionLogEntry[] = [];
  for (const entry of log) {
    if (keysOrStimuli.has(entry[0]) || keysOrStimuli.has(entry[4])) {
      out.push(entry);
      continue;
    }
    const recs = entry[3];
    for (let i = 0; i < recs.length; i += 2) {
      if (keysOrStimuli.has(recs[i])) {
        out.push(entry);
        break;
      }
    }
  }
  return out;
}

/** One record as Python prints the tuple: `('x', 'waiting', 'processing', {}, 'stim-1', 0.5)`. */
export function formatLogEntry(entry: TransitionLogEntry): string {
  const [key, start, finish, recs, stimulusId, time] = entry;
  const parts: string[] = [];
  for (let i = 0; i < recs.length; i += 2) {
    parts.push(`${pyKeyRepr(recs[i])}: ${pyRepr(recs[i + 1])}`);
  }
  return `(${pyKeyRepr(key)}, ${pyRepr(start)}, ${pyRepr(finish)}, {${parts.join(", ")}}, ${pyRepr(stimulusId)}, ${time})`;
}

/** A story, one record a line, indented for error messages. */
export function formatStory(story: readonly TransitionLogEntry[]): string {
  return story.map((entry) => `    ${formatLogEntry(entry)}`).join("\n");
}
