/** A worker's tasks as the dump records them. */

import { type Ctx, child, type PathNode } from "./errors.ts";
import { parseTaskStateRepr, type TaskRef, taskStateReprProblem } from "./pyRepr.ts";
import { keyString } from "./taskKeys.ts";
import type { DumpObject, DumpValue } from "./values.ts";

/**
 * A worker's task as dumped (`TaskState._to_dict_no_nest`, falsy fields
 * dropped), with typed access. Absent fields read as their falsy value.
 */
export interface DumpTask {
  /** The key (`str()` form). */
  readonly key: string;
  /** `released`, `waiting`, `ready`, `executing`, `memory`, `error`, `fetch`, `flight`, … */
  readonly state: string;
  /** `previous` of cancelled/resumed tasks, else null. */
  readonly previous: string | null;
  /** `next` of resumed tasks, else null. */
  readonly next: string | null;
  /** Whether the task's execution or transfer completed. */
  readonly done: boolean;
  /** The priority tuple, or null. */
  readonly priority: readonly number[] | null;
  /** Size in bytes, or null (unknown, or 0). */
  readonly nbytes: number | null;
  /** The run id (an absent `run_id` is 0: Dask's sentinel -1 is truthy and kept). */
  readonly runId: number;
  /** Tasks this one depends on. */
  readonly dependencies: readonly TaskRef[];
  /** Tasks depending on this one. */
  readonly dependents: readonly TaskRef[];
  /** Dependencies not in memory yet. */
  readonly waitingForData: readonly TaskRef[];
  /** Tasks waiting for this one. */
  readonly waiters: readonly TaskRef[];
  /** Workers known to hold the task's data. */
  readonly whoHas: readonly string[];
  /** The worker it is being fetched from, or null. */
  readonly comingFrom: string | null;
  /** `{resource: amount}`. */
  readonly resourceRestrictions: Readonly<Record<string, number>>;
  /** The error text of an erred task, else `""`. */
  readonly exceptionText: string;
  /** The traceback text of an erred task, else `""`. */
  readonly tracebackText: string;
  /** The normalized dict, for every other field. */
  readonly raw: DumpObject;
}

function taskRefs(obj: DumpObject, field: string, path: PathNode, ctx: Ctx): TaskRef[] {
  const v = obj[field];
  if (v === undefined || v === null) return [];
  const p = child(path, field);
  return ctx.list(v, p).map((item, i) => {
    const s = ctx.string(item, child(p, i));
    const ref = parseTaskStateRepr(s);
    if (!ref) ctx.fail(child(p, i), taskStateReprProblem(s));
    return ref;
  });
}

export function normalizeTask(key: string, v: DumpValue, path: PathNode, ctx: Ctx): DumpTask {
  const t = ctx.object(v, path);
  const dumpedKey = keyString(t.key, child(path, "key"), ctx);
  if (dumpedKey !== key) {
    ctx.fail(
      child(path, "key"),
      `the task's key ${JSON.stringify(dumpedKey)} differs from its entry's key`,
    );
  }
  t.key = dumpedKey;
  const state = ctx.string(t.state, child(path, "state"));
  let priority: number[] | null = null;
  if (t.priority !== undefined && t.priority !== null) {
    const p = child(path, "priority");
    priority = ctx.list(t.priority, p).map((n, i) => ctx.finiteNumber(n, child(p, i)));
  }
  const whoHasPath = child(path, "who_has");
  const whoHas =
    t.who_has === undefined || t.who_has === null
      ? []
      : ctx.list(t.who_has, whoHasPath).map((w, i) => ctx.string(w, child(whoHasPath, i)));
  const rrPath = child(path, "resource_restrictions");
  const resourceRestrictions: Record<string, number> = {};
  if (t.resource_restrictions !== undefined && t.resource_restrictions !== null) {
    for (const [r, n] of Object.entries(ctx.object(t.resource_restrictions, rrPath))) {
      resourceRestrictions[r] = ctx.finiteNumber(n, child(rrPath, r));
    }
  }
  return {
    key,
    state,
    previous: ctx.optionalString(t.previous, child(path, "previous")),
    next: ctx.optionalString(t.next, child(path, "next")),
    done: ctx.optionalBoolean(t.done, child(path, "done")) ?? false,
    priority,
    // Compared with the replay's: a NaN would show as a difference, not as the input error it is.
    nbytes: ctx.optionalFiniteNumber(t.nbytes, child(path, "nbytes")),
    runId: ctx.optionalFiniteNumber(t.run_id, child(path, "run_id")) ?? 0,
    dependencies: taskRefs(t, "dependencies", path, ctx),
    dependents: taskRefs(t, "dependents", path, ctx),
    waitingForData: taskRefs(t, "waiting_for_data", path, ctx),
    waiters: taskRefs(t, "waiters", path, ctx),
    whoHas,
    comingFrom: ctx.optionalString(t.coming_from, child(path, "coming_from")),
    resourceRestrictions,
    exceptionText: ctx.optionalString(t.exception_text, child(path, "exception_text")) ?? "",
    tracebackText: ctx.optionalString(t.traceback_text, child(path, "traceback_text")) ?? "",
    raw: t,
  };
}
