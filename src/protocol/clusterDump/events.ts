/** The events of a worker's stimulus log, as the dump records them. */

import { type Ctx, child, type PathNode } from "./errors.ts";
import { keyList, keyString } from "./taskKeys.ts";
import type { DumpObject, DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/**
 * A stimulus as the dump records it: Dask's dict form of a `StateMachineEvent`
 * (`cls`, `stimulus_id`, `handled`, then every field under its Python name),
 * normalized: `key` and `keys` are `str()` key strings; `handled` is null when absent.
 */
export interface DumpEvent extends DumpObject {
  /** The Python class name, e.g. `"ComputeTaskEvent"`. */
  cls: string;
  /** The stimulus id. */
  stimulus_id: string;
  /** When the worker handled it (`time()`), or null. */
  handled: number | null;
}

/** Fields each known event class must have in a dump (besides `cls`, `stimulus_id`). */
export const EVENT_REQUIRED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  PauseEvent: [],
  UnpauseEvent: [],
  FindMissingEvent: [],
  RetryBusyWorkerEvent: ["worker"],
  GatherDepSuccessEvent: ["worker", "total_nbytes", "data"],
  GatherDepBusyEvent: ["worker", "total_nbytes"],
  GatherDepNetworkFailureEvent: ["worker", "total_nbytes"],
  GatherDepFailureEvent: ["worker", "total_nbytes", "exception_text", "traceback_text"],
  RemoveWorkerEvent: ["worker"],
  ComputeTaskEvent: [
    "key",
    "run_id",
    "who_has",
    "nbytes",
    "priority",
    "duration",
    "resource_restrictions",
    "actor",
    "annotations",
  ],
  ExecuteSuccessEvent: ["key", "run_id", "start", "stop", "nbytes"],
  ExecuteFailureEvent: ["key", "run_id", "exception_text", "traceback_text"],
  RescheduleEvent: ["key"],
  CancelComputeEvent: ["key"],
  RefreshWhoHasEvent: ["who_has"],
  AcquireReplicasEvent: ["who_has", "nbytes"],
  RemoveReplicasEvent: ["keys"],
  FreeKeysEvent: ["keys"],
  StealRequestEvent: ["key"],
  UpdateDataEvent: ["data"],
  SecedeEvent: ["key", "compute_duration"],
};

export function normalizeEvent(v: DumpValue, path: PathNode, ctx: Ctx): DumpEvent {
  const ev = ctx.object(v, path);
  const cls = ctx.string(ev.cls, child(path, "cls"));
  ctx.string(ev.stimulus_id, child(path, "stimulus_id"));
  ev.handled =
    ev.handled === undefined || ev.handled === null
      ? null
      : ctx.finiteNumber(ev.handled, child(path, "handled"));
  for (const field of EVENT_REQUIRED_FIELDS[cls] ?? []) {
    if (!Object.hasOwn(ev, field)) ctx.fail(child(path, field), `missing (a ${cls} has it)`);
  }
  if (Object.hasOwn(ev, "key")) ev.key = keyString(ev.key, child(path, "key"), ctx);
  if (Object.hasOwn(ev, "keys")) ev.keys = keyList(ev.keys, child(path, "keys"), ctx);
  if (Object.hasOwn(ev, "who_has")) {
    const p = child(path, "who_has");
    for (const [k, workers] of Object.entries(ctx.object(ev.who_has, p))) {
      const list = ctx.list(workers, child(p, k));
      list.forEach((w, i) => {
        ctx.string(w, child(child(p, k), i));
      });
    }
  }
  if (Object.hasOwn(ev, "nbytes")) {
    const p = child(path, "nbytes");
    if (isDumpObject(ev.nbytes)) {
      for (const [k, n] of Object.entries(ev.nbytes)) ctx.finiteNumber(n, child(p, k));
    } else if (ev.nbytes !== null) {
      ctx.finiteNumber(ev.nbytes, p);
    }
  }
  if (Object.hasOwn(ev, "data")) ctx.object(ev.data, child(path, "data"));
  if (ev.resource_restrictions !== undefined && ev.resource_restrictions !== null) {
    const p = child(path, "resource_restrictions");
    for (const [r, n] of Object.entries(ctx.object(ev.resource_restrictions, p))) {
      ctx.finiteNumber(n, child(p, r));
    }
  }
  if (Object.hasOwn(ev, "priority") && ev.priority !== null) {
    const p = child(path, "priority");
    ctx.list(ev.priority, p).forEach((n, i) => {
      ctx.finiteNumber(n, child(p, i));
    });
  }
  for (const field of ["worker"] as const) {
    if (Object.hasOwn(ev, field)) ctx.string(ev[field], child(path, field));
  }
  for (const field of ["run_id", "total_nbytes", "compute_duration"] as const) {
    if (Object.hasOwn(ev, field)) ctx.finiteNumber(ev[field], child(path, field));
  }
  // Null where Dask has no time or estimate (a failure before the task ran).
  for (const field of ["start", "stop", "duration"] as const) {
    const v = ev[field];
    if (v !== undefined && v !== null) ctx.finiteNumber(v, child(path, field));
  }
  return ev as DumpEvent;
}
