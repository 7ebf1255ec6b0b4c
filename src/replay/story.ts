import type { ClusterDump, DumpValue } from "../protocol/clusterDump.ts";
import { isDumpObject } from "../protocol/clusterDump.ts";
import { showValue } from "../util/showValue.ts";
import { inTimeOrder } from "../util/timeOrder.ts";
import { formatLogEntry } from "../worker/state/errors.ts";
import { type LogEntry, workerStory } from "../worker/state/log.ts";
import type { WorkerState } from "../worker/state/workerState.ts";
import { plainRecord } from "./records.ts";

/** Where the scheduler's records happened, in a story. */
export const SCHEDULER = "scheduler";

/** One record of a story. */
export interface StoryLine {
  /** When it was logged (seconds since the epoch), or null. */
  readonly time: number | null;
  /** `"scheduler"` or a worker's address. */
  readonly where: string;
  /** From the dumped logs, from a replay of the worker, or from a running cluster (`Client.story`). */
  readonly source: "dump" | "replay" | "live";
  /** The record without its time, as plain JSON values. */
  readonly record: readonly unknown[];
  /** The same as Python prints a tuple. */
  readonly text: string;
}

/** Options of {@link clusterStory}. */
export interface ClusterStoryOptions {
  /** Workers' stories from these replayed state machines instead of the dumped logs. */
  readonly replayed?: ReadonlyMap<string, WorkerState>;
}

/**
 * `scheduler_story` of Dask, which matches a record's key and its recommendations;
 * here a record's stimulus id matches too, so stimulus ids tell their story on the
 * scheduler as on the workers. Records: `[key, start, finish, recs, stimulus_id, time]`.
 */
export function schedulerStory(
  keysOrStimuli: ReadonlySet<string>,
  log: readonly (readonly DumpValue[])[],
): (readonly DumpValue[])[] {
  return log.filter((t) => {
    if (typeof t[0] === "string" && keysOrStimuli.has(t[0])) return true;
    const recs = t[3];
    if (isDumpObject(recs) && Object.keys(recs).some((k) => keysOrStimuli.has(k))) return true;
    return typeof t[4] === "string" && keysOrStimuli.has(t[4]);
  });
}

function line(where: string, source: StoryLine["source"], entry: LogEntry): StoryLine {
  const last = entry[entry.length - 1];
  // Workers' records are checked to end with their time when the dump is loaded, the
  // scheduler's are not: a record without one (cut short, or of another shape) is
  // shown whole, instead of losing its stimulus id, or its key, as if that were the time.
  const timed = typeof last === "number";
  const body = timed ? entry.slice(0, -1) : entry;
  return {
    time: timed ? last : null,
    where,
    source,
    record: plainRecord(body),
    text: formatLogEntry(body),
  };
}

/**
 * The story of tasks or stimulus ids across a dump's scheduler and every worker
 * (`worker_story` of each worker's log; the Worker's own records included), merged in
 * time order (records of one log keep their order at equal times).
 */
export function clusterStory(
  dump: ClusterDump,
  keysOrStimuli: readonly string[],
  options: ClusterStoryOptions = {},
): StoryLine[] {
  // A lone string was a set of its characters: a story of nothing, unsaid.
  if (!Array.isArray(keysOrStimuli) || !keysOrStimuli.every((k) => typeof k === "string")) {
    throw new TypeError(
      `clusterStory: the keys must be a list of strings, got ${showValue(keysOrStimuli)}`,
    );
  }
  const wanted = new Set(keysOrStimuli);
  const lines: StoryLine[] = [];
  for (const t of schedulerStory(wanted, dump.scheduler.transitionLog)) {
    lines.push(line(SCHEDULER, "dump", t));
  }
  for (const [address, w] of dump.workers) {
    const replayed = options.replayed?.get(address);
    if (replayed !== undefined) {
      for (const r of workerStory(wanted, replayed.log)) lines.push(line(address, "replay", r));
    } else {
      for (const r of workerStory(wanted, w.log)) lines.push(line(address, "dump", r));
    }
  }
  return inTimeOrder(lines, (l) => l.time);
}

/**
 * The records a running cluster gave (`Client.story`: each `{where, record}`,
 * the record's time last) as a story, in time order.
 */
export function liveStory(
  records: readonly { readonly where: string; readonly record: readonly unknown[] }[],
): StoryLine[] {
  return inTimeOrder(
    records.map((r) => line(r.where, "live", r.record)),
    (l) => l.time,
  );
}
