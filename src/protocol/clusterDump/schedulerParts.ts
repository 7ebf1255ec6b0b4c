/**
 * The scheduler's part of a cluster dump as it crosses the wire (`dump-state`'s
 * reply): its dict, with the tasks and the transition log (the bulk of it) in
 * parts, each read and encoded in a turn of the scheduler's event loop of its
 * own (`schedulerDumpInParts`), so that it serves its workers and clients
 * between two; the client joins them. Answered in one turn, 40,000 tasks held
 * stalled the scheduler for 1.4-2.2 s, long enough for heartbeats and every
 * other request to wait.
 */

import { decodeMessage, encodeMessage } from "../../comm/wireCodec.ts";

/** Tasks encoded in one part (some 30 ms of work each). */
export const TASKS_PER_PART = 1000;
/** Transition log records encoded in one part. */
export const LOG_ENTRIES_PER_PART = 5000;

/** A scheduler dict whose `tasks` and `transition_log` travel as encoded parts. */
export interface SchedulerDumpParts {
  /** The dict, its `tasks` empty and its `transition_log` empty. */
  readonly scheduler: Record<string, unknown>;
  /** The tasks, `TASKS_PER_PART` a part: each an encoded `{key: task dict}`. */
  readonly tasks: readonly Uint8Array[];
  /** The transition log, oldest first, `LOG_ENTRIES_PER_PART` a part: each an encoded array. */
  readonly transitionLog: readonly Uint8Array[];
}

/** `value` (plain data) encoded as a part of a `dump-state` reply. */
export function encodedPart(value: unknown): Uint8Array {
  const { payload, buffers } = encodeMessage(value);
  // Plain data has none: only large byte arrays and cloned values go out of band.
  if (buffers.length > 0) throw new Error("a cluster dump part refers to out-of-band buffers");
  return payload;
}

function isParts(v: unknown): v is SchedulerDumpParts {
  if (typeof v !== "object" || v === null) return false;
  const p = v as Record<string, unknown>;
  return (
    typeof p.scheduler === "object" &&
    p.scheduler !== null &&
    Array.isArray(p.tasks) &&
    p.tasks.every((b) => b instanceof Uint8Array) &&
    Array.isArray(p.transitionLog) &&
    p.transitionLog.every((b) => b instanceof Uint8Array)
  );
}

/** The scheduler's dict of a `dump-state` reply, its parts decoded and joined. */
export function joinedSchedulerDump(reply: unknown): Record<string, unknown> {
  if (!isParts(reply)) throw new TypeError("dump-state: the scheduler's reply is malformed");
  const tasks: Record<string, unknown> = {};
  for (const part of reply.tasks) Object.assign(tasks, decodeMessage(part));
  const log: unknown[] = [];
  for (const part of reply.transitionLog) {
    for (const entry of decodeMessage(part) as unknown[]) log.push(entry);
  }
  return { ...reply.scheduler, tasks, transition_log: log };
}
