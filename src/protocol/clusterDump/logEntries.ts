/** The entries of a worker's transition log (`WorkerState.log`), and their typed reading. */

import { type Ctx, child, type PathNode } from "./errors.ts";
import { keyList, keyString } from "./taskKeys.ts";
import type { DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/** A worker log entry: one of the tuples of `WorkerState.log` (see {@link classifyLogEntry}). */
export type WorkerLogEntry = readonly DumpValue[];

/** Log entries that start with a tag and a worker address, then keys: written by the Worker. */
export const WORKER_LOG_TAGS: ReadonlySet<string> = new Set([
  "gather-dependencies",
  "request-dep",
  "receive-dep",
  "gather-dep-failed",
  "busy-gather",
]);

/** A classified worker log entry. */
export type WorkerLogRecord =
  | {
      /** `[key, start, recommended, final, {key: state}, stimulus_id, time]` */
      readonly kind: "transition";
      readonly key: string;
      readonly start: string;
      readonly recommended: string;
      readonly final: string;
      readonly recommendations: Readonly<Record<string, string>>;
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `[key, action, state, stimulus_id, time]` (compute-task, ensure-task-exists,
       * receive-from-scatter) or `[key, action, stimulus_id, time]` (put-in-memory,
       * remove-replica, missing-dep, cancel-compute; `state` null). */
      readonly kind: "task";
      readonly key: string;
      readonly action: string;
      readonly state: string | null;
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `["free-keys", [keys], stimulus_id, time]` */
      readonly kind: "free-keys";
      readonly keys: readonly string[];
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `[tag, worker, [keys], stimulus_id, time]` for the {@link WORKER_LOG_TAGS} */
      readonly kind: "worker";
      readonly action: string;
      readonly worker: string;
      readonly keys: readonly string[];
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** Any other shape. */
      readonly kind: "other";
      readonly entry: WorkerLogEntry;
    };

type LogShape = "transition" | "task5" | "task4" | "free-keys" | "worker" | "other";

function logShape(e: readonly DumpValue[]): LogShape {
  if (e.length === 7 && isDumpObject(e[4])) return "transition";
  if (
    e.length === 5 &&
    typeof e[0] === "string" &&
    WORKER_LOG_TAGS.has(e[0]) &&
    Array.isArray(e[2])
  ) {
    return "worker";
  }
  if (e.length === 4 && e[0] === "free-keys" && Array.isArray(e[1])) return "free-keys";
  if (e.length === 5 && typeof e[1] === "string") return "task5";
  if (e.length === 4 && typeof e[1] === "string") return "task4";
  return "other";
}

export function normalizeLogEntry(v: DumpValue, path: PathNode, ctx: Ctx): WorkerLogEntry {
  const e = ctx.list(v, path);
  switch (logShape(e)) {
    case "transition":
    case "task5":
    case "task4":
      e[0] = keyString(e[0], child(path, 0), ctx);
      break;
    case "free-keys":
      e[1] = keyList(e[1], child(path, 1), ctx);
      break;
    case "worker":
      e[2] = keyList(e[2], child(path, 2), ctx);
      break;
    default:
      break;
  }
  return e;
}

/** Reads a worker log entry as a typed record; entries of unexpected shape are `"other"`. */
export function classifyLogEntry(entry: WorkerLogEntry): WorkerLogRecord {
  const e = entry;
  const str = (v: DumpValue | undefined): v is string => typeof v === "string";
  const num = (v: DumpValue | undefined): v is number => typeof v === "number";
  const strings = (v: DumpValue | undefined): v is string[] => Array.isArray(v) && v.every(str);
  switch (logShape(e)) {
    case "transition": {
      const recs = e[4];
      if (
        str(e[0]) &&
        str(e[1]) &&
        str(e[2]) &&
        str(e[3]) &&
        isDumpObject(recs) &&
        Object.values(recs).every(str) &&
        str(e[5]) &&
        num(e[6])
      ) {
        const recommendations = recs as Record<string, string>;
        return {
          kind: "transition",
          key: e[0],
          start: e[1],
          recommended: e[2],
          final: e[3],
          recommendations,
          stimulusId: e[5],
          time: e[6],
        };
      }
      break;
    }
    case "task5":
      if (str(e[0]) && str(e[1]) && (str(e[2]) || e[2] === null) && str(e[3]) && num(e[4])) {
        return { kind: "task", key: e[0], action: e[1], state: e[2], stimulusId: e[3], time: e[4] };
      }
      break;
    case "task4":
      if (str(e[0]) && str(e[1]) && str(e[2]) && num(e[3])) {
        return { kind: "task", key: e[0], action: e[1], state: null, stimulusId: e[2], time: e[3] };
      }
      break;
    case "free-keys":
      if (strings(e[1]) && str(e[2]) && num(e[3])) {
        return { kind: "free-keys", keys: e[1], stimulusId: e[2], time: e[3] };
      }
      break;
    case "worker":
      if (str(e[0]) && str(e[1]) && strings(e[2]) && str(e[3]) && num(e[4])) {
        return {
          kind: "worker",
          action: e[0],
          worker: e[1],
          keys: e[2],
          stimulusId: e[3],
          time: e[4],
        };
      }
      break;
    default:
      break;
  }
  return { kind: "other", entry };
}
