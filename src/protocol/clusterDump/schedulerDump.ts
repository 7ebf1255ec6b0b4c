/** The scheduler part of the dump, typed. */

import { type Ctx, child } from "./errors.ts";
import { statusName } from "./serverStatus.ts";
import { keyString } from "./taskKeys.ts";
import type { DumpObject, DumpValue } from "./values.ts";

/** The scheduler part of the dump (a typed subset). */
export interface SchedulerDump {
  /** The scheduler's address, or null. */
  readonly address: string | null;
  /** `Scheduler-…` id, or null. */
  readonly id: string | null;
  /** Status name (`"running"`), or null. */
  readonly status: string | null;
  /** `Scheduler.transition_counter`, or null. */
  readonly transitionCounter: number | null;
  /** `[key, start, finish, recommendations, stimulus_id, time]` entries (key normalized). */
  readonly transitionLog: readonly (readonly DumpValue[])[];
  /** The scheduler's TaskState dicts by key. */
  readonly tasks: ReadonlyMap<string, DumpObject>;
  /** The scheduler's WorkerState dicts by address. */
  readonly workers: ReadonlyMap<string, DumpObject>;
  /** The whole normalized scheduler dict. */
  readonly raw: DumpObject;
}

export function buildScheduler(s: DumpObject, ctx: Ctx): SchedulerDump {
  const path = child(null, "scheduler");
  const transitionLog: DumpValue[][] = [];
  if (s.transition_log !== undefined && s.transition_log !== null) {
    const p = child(path, "transition_log");
    ctx.list(s.transition_log, p).forEach((e, i) => {
      const entry = ctx.list(e, child(p, i));
      if (entry.length > 0) entry[0] = keyString(entry[0], child(child(p, i), 0), ctx);
      transitionLog.push(entry);
    });
  }
  const tasks = new Map<string, DumpObject>();
  if (s.tasks !== undefined && s.tasks !== null) {
    const p = child(path, "tasks");
    for (const [key, t] of Object.entries(ctx.object(s.tasks, p))) {
      const task = ctx.object(t, child(p, key));
      if (Object.hasOwn(task, "key"))
        task.key = keyString(task.key, child(child(p, key), "key"), ctx);
      // The size a transferred or scattered value's stand-in takes: a NaN one would
      // show as a difference in the worker's task, far from its cause.
      if (typeof task.nbytes === "number")
        ctx.finiteNumber(task.nbytes, child(child(p, key), "nbytes"));
      tasks.set(key, task);
    }
  }
  const workers = new Map<string, DumpObject>();
  if (s.workers !== undefined && s.workers !== null) {
    const p = child(path, "workers");
    for (const [address, w] of Object.entries(ctx.object(s.workers, p))) {
      workers.set(address, ctx.object(w, child(p, address)));
    }
  }
  return {
    address: ctx.optionalString(s.address, child(path, "address")),
    id: ctx.optionalString(s.id, child(path, "id")),
    status: statusName(s.status, child(path, "status"), ctx),
    transitionCounter: ctx.optionalNumber(s.transition_counter, child(path, "transition_counter")),
    transitionLog,
    tasks,
    workers,
    raw: s,
  };
}
