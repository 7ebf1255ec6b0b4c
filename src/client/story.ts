/**
 * The story of keys or stimulus ids across a running cluster (Dask's
 * `Client.story`): the scheduler's transition log records and every worker's,
 * merged in time order.
 */

import { showValue } from "../util/showValue.ts";
import { inTimeOrder } from "../util/timeOrder.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { callEachWorker } from "./askWorkers.ts";

/** One record of a story: where it was logged, and the record as Dask's tuple (its time last). */
export interface StoryRecord {
  /** `"scheduler"` or a worker's address. */
  readonly where: string;
  /** When it was logged (wall-clock seconds), or null for a record without a time. */
  readonly time: number | null;
  /** The transition log record: the scheduler's `[key, start, finish, {key: state}, stimulus_id, time]`, or a worker's (`[key, start, recommended, final, {…}, stimulus_id, time]`, and the other kinds). */
  readonly record: readonly unknown[];
}

/** Why `keys` cannot be asked for, or null. */
export function storyKeysProblem(keys: readonly unknown[]): string | null {
  if (keys.length === 0) return "give at least one key or stimulus id";
  // The index, not the key found: an undefined key would read as none found.
  const bad = keys.findIndex((k) => typeof k !== "string" || k === "");
  return bad === -1 ? null : `keys must be non-empty strings, got ${showValue(keys[bad])}`;
}

function isRecordList(v: unknown): v is unknown[][] {
  return Array.isArray(v) && v.every(Array.isArray);
}

/** `records` from `where`, each with its time. */
function timed(where: string, records: readonly (readonly unknown[])[]): StoryRecord[] {
  return records.map((record) => {
    const last = record[record.length - 1];
    return { where, time: typeof last === "number" ? last : null, record };
  });
}

/** Each worker's records of `keys`; rejects naming the first worker (by address) that could not tell. */
export async function storiesOfWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  keys: readonly string[],
  who: string,
): Promise<StoryRecord[]> {
  const answers = await callEachWorker(
    peers,
    addresses,
    { op: "story", method: "get_story", args: { keys: [...keys] }, who },
    { noun: "story", expected: "no records" },
    (got, address) => (isRecordList(got) ? timed(address, got) : null),
  );
  return Object.values(answers).flat();
}

/** The scheduler's records (answered to `story`) and the workers', merged in time order. */
export function mergedStory(scheduler: unknown, workers: readonly StoryRecord[]): StoryRecord[] {
  if (!isRecordList(scheduler)) throw new Error("story: the scheduler answered with no records");
  return inTimeOrder([...timed("scheduler", scheduler), ...workers], (r) => r.time);
}
