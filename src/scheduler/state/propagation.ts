/**
 * The consequences of a task reaching memory, released, erred or forgotten for
 * the tasks around it (Dask's `_add_to_memory` and `_propagate_*`).
 */

import { comparePriority } from "../../util/priority.ts";
import { assert } from "../../util/pyErrors.ts";
import { addReplica, removeAllReplicas } from "./bookkeeping.ts";
import { doneForFireAndForget } from "./fireAndForget.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { EMPTY, itemsOf, setAdd, setDelete } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import type { TransitionArgs } from "./transitionArgs.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** Scratch for the dependents made ready by one result. */
const readyScratch: TaskState[] = [];

/** The result of `ts` is on `ws` (Dask's `_add_to_memory`). */
export function addToMemory(
  s: SchedulerState,
  ts: TaskState,
  ws: WorkerInfo,
  typename: string,
): void {
  addReplica(s, ts, ws);

  // Dependents this result makes ready; recommended worst priority first, so
  // that the best is processed first (the work list is last in, first out).
  const ready = readyScratch;
  ready.length = 0;
  for (const dts of itemsOf(ts.dependents)) {
    if (setDelete(dts.waitingOn, ts) && dts.waitingOn.size === 0) ready.push(dts);
  }
  if (ready.length > 1) ready.sort((a, b) => comparePriority(b.priority, a.priority));
  for (const dts of ready) s.recommend(dts, "processing");
  ready.length = 0;

  for (const dts of itemsOf(ts.dependencies)) {
    setDelete(dts.waiters, ts);
    if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
  }

  if (ts.waiters.size === 0 && ts.whoWants.size === 0) {
    s.recommend(ts, "released");
  } else if (ts.whoWants.size > 0) {
    s.sendToWhoWants(ts, { op: "key-in-memory", key: ts.key, typename, stimulusId: s.stimulusId });
  }
  ts.state = "memory";
  ts.typename = typename;
  doneForFireAndForget(s, ts);
}

/** `ts` is now released; recommend what follows (Dask's `_propagate_released`). */
export function propagateReleased(s: SchedulerState, ts: TaskState): void {
  ts.state = "released";
  let toWaiting = false;
  if (ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
  } else if (ts.waiters.size > 0 || ts.whoWants.size > 0) {
    s.recommend(ts, "waiting");
    toWaiting = true;
  }
  if (!toWaiting) {
    for (const dts of itemsOf(ts.dependencies)) {
      if (dts.state !== "released") {
        setDelete(dts.waiters, ts);
        if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
      }
    }
    ts.waiters = EMPTY;
  }
}

/** Tell the clients wanting `ts` that it erred, with the error of `failing`, the task that raised. */
export function reportErred(s: SchedulerState, ts: TaskState, failing: TaskState): void {
  if (ts.whoWants.size === 0) return;
  s.sendToWhoWants(ts, {
    op: "task-erred",
    key: ts.key,
    blame: failing.key,
    exception: failing.exception,
    traceback: failing.traceback,
    exceptionText: failing.exceptionText,
    tracebackText: failing.tracebackText,
    stimulusId: s.stimulusId,
  });
}

/** `ts` raised (or inherits a dependency's error); err it and its waiters (Dask's `_propagate_erred`). */
export function propagateErred(
  s: SchedulerState,
  ts: TaskState,
  args: TransitionArgs | undefined,
): void {
  ts.state = "erred";
  let failing: TaskState;
  if (args !== undefined && args.kind === "erred") {
    if (args.worker !== null) ts.erredOn = setAdd(ts.erredOn, args.worker);
    ts.exception = args.exception;
    ts.traceback = args.traceback;
    ts.exceptionText = args.exceptionText;
    ts.tracebackText = args.tracebackText;
    ts.exceptionBlame = ts;
    failing = ts;
  } else {
    assert(ts.exceptionBlame !== null, () => `${ts.key} erred with nothing to blame`);
    failing = ts.exceptionBlame;
  }

  for (const dts of itemsOf(ts.waiters)) {
    dts.exceptionBlame = failing;
    s.recommend(dts, "erred");
  }
  for (const dts of itemsOf(ts.dependencies)) {
    setDelete(dts.waiters, ts);
    if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
  }
  ts.waiters = EMPTY;
  reportErred(s, ts, failing);
  doneForFireAndForget(s, ts);
}

/** `ts` is being forgotten: unlink it from the graph (Dask's `_propagate_forgotten`). */
export function propagateForgotten(s: SchedulerState, ts: TaskState): void {
  ts.state = "forgotten";
  for (const dts of itemsOf(ts.dependents)) {
    dts.hasLostDependencies = true;
    setDelete(dts.dependencies, ts);
    setDelete(dts.waitingOn, ts);
    if (dts.state !== "memory" && dts.state !== "erred") s.recommend(dts, "forgotten");
  }
  ts.dependents = EMPTY;
  ts.waiters = EMPTY;
  for (const dts of itemsOf(ts.dependencies)) {
    setDelete(dts.dependents, ts);
    setDelete(dts.waiters, ts);
    if (dts.dependents.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "forgotten");
  }
  ts.dependencies = EMPTY;
  ts.waitingOn = EMPTY;
  for (const ws of ts.whoHas) {
    if (s.workers.get(ws.address) === ws) s.freeKeys(ws, ts.key);
  }
  removeAllReplicas(s, ts);
}

/** The clients wanting `ts` lose it, told why with `cancelled-keys`. */
export function cancelForWanters(s: SchedulerState, ts: TaskState, reason: string): void {
  if (ts.whoWants.size === 0) return;
  for (const cs of ts.whoWants) {
    s.sendToClient(cs, {
      op: "cancelled-keys",
      keys: [ts.key],
      reason,
      stimulusId: s.stimulusId,
      submission: cs.lastSubmission,
    });
    cs.wantsWhat.delete(ts);
  }
  ts.whoWants = EMPTY;
}

/** Remove a forgotten task from the scheduler, telling any client that still wanted it. */
export function removeKey(s: SchedulerState, ts: TaskState): void {
  cancelForWanters(
    s,
    ts,
    ts.hasLostDependencies ? "lost dependencies: a task it needs was lost" : "already forgotten",
  );
  if (s.tasks.get(ts.key) === ts) {
    s.tasks.delete(ts.key);
    const tg = ts.group;
    tg.size -= 1;
    if (tg.size === 0 && s.taskGroups.get(tg.name) === tg) s.taskGroups.delete(tg.name);
  }
  s.unrunnable.delete(ts);
  ts.processingOn = null;
  ts.exceptionBlame = null;
  ts.exception = null;
  ts.traceback = null;
}

/** A task must not be forgotten while something still needs it. */
export function assertForgettable(ts: TaskState): void {
  assert(
    ts.runSpec === null ||
      ts.hasLostDependencies ||
      (ts.whoWants.size === 0 && ts.waiters.size === 0 && ts.dependents.size === 0),
    () => `${ts.key} is still needed and cannot be forgotten`,
  );
}
