/**
 * The scheduler's transition table: `(start, finish) → function`, exactly the
 * pairs of Dask's `SchedulerState._TRANSITIONS_TABLE`. Any other pair goes
 * through `released` (see `SchedulerState.transition`).
 *
 * A transition function changes one task's state and the bookkeeping around
 * it, queues messages, and recommends further transitions with
 * `s.recommend(task, finish)`.
 */

import { assert } from "../../util/pyErrors.ts";
import { addToProcessing, exitProcessing, removeAllReplicas, setNbytes } from "./bookkeeping.ts";
import { doneForFireAndForget } from "./fireAndForget.ts";
import { notifyLeftNoWorker, notifyNoWorker } from "./notify.ts";
import {
  decideWorkerNonRootish,
  decideWorkerRootishQueuingEnabled,
  isRootish,
} from "./placement.ts";
import {
  addToMemory,
  assertForgettable,
  cancelForWanters,
  propagateErred,
  propagateForgotten,
  propagateReleased,
  removeKey,
  reportErred,
} from "./propagation.ts";
import { replicatedKeyLost } from "./replicate.ts";
import { retirementKeyLost } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { EMPTY, itemsOf, setAdd, setDelete } from "./sets.ts";
import { IN_PLAY, type SchedulerTaskStateName, type TaskState } from "./taskState.ts";
import type { TransitionArgs } from "./transitionArgs.ts";
import type { WorkerInfo } from "./workerInfo.ts";

export type { ErredArgs, MemoryArgs, TransitionArgs } from "./transitionArgs.ts";

/** One transition: change `ts` (currently in the table's start state) towards the finish state. */
export type TransitionFunction = (
  s: SchedulerState,
  ts: TaskState,
  args: TransitionArgs | undefined,
) => void;

/** The transition table: `TRANSITIONS[start][finish]`. */
export type TransitionTable = {
  readonly [S in SchedulerTaskStateName]: Readonly<
    Partial<Record<SchedulerTaskStateName, TransitionFunction>>
  >;
};

function releasedWaiting(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.runSpec !== null, "task without a run spec cannot wait");
    assert(ts.waitingOn.size === 0, "released task is waiting on dependencies");
    assert(ts.whoHas.size === 0, "released task is in memory");
    assert(ts.processingOn === null, "released task is processing");
    for (const dts of itemsOf(ts.dependencies)) {
      assert(dts.state !== "forgotten", () => `dependency ${dts} is forgotten`);
    }
  }
  if (ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
    return;
  }
  // A task released while a dependency erred (it was not waiting then) and
  // wanted again cannot run: it errs with the same blame. Dask asserts this
  // never happens; clients asking again for such a key make it happen here.
  for (const dts of itemsOf(ts.dependencies)) {
    if (dts.state === "erred") {
      ts.exceptionBlame = dts.exceptionBlame;
      // It will not wait: it stops being a waiter of its inputs (it may still
      // be one, released on its way back to waiting; found by the simulator,
      // seed 6430), and those nothing else needs are released, as processing →
      // erred releases them. So is one it never was a waiter of: sent back to
      // waiting for it while it was still processing, that input counted only
      // its dependents then waiting, and would be computed for nobody. An
      // erred input stays erred (released, it would tell its clients it is
      // retried).
      for (const d of itemsOf(ts.dependencies)) {
        setDelete(d.waiters, ts);
        if (
          d.waiters.size === 0 &&
          d.whoWants.size === 0 &&
          (d.state === "memory" || IN_PLAY.has(d.state))
        ) {
          s.recommend(d, "released");
        }
      }
      s.recommend(ts, "erred");
      return;
    }
  }
  // No input erred: a blame left from a recommendation to err that another
  // overrode (a waiter released on its way to erred: nothing needed it any
  // more) is stale. Dask keeps it, and the task then runs with an error to blame.
  ts.exceptionBlame = null;
  ts.state = "waiting";
  for (const dts of itemsOf(ts.dependencies)) {
    if (dts.whoHas.size === 0) ts.waitingOn = setAdd(ts.waitingOn, dts);
    if (dts.state === "released") s.recommend(dts, "waiting");
    else dts.waiters = setAdd(dts.waiters, ts);
  }
  ts.waiters = EMPTY;
  for (const dts of itemsOf(ts.dependents)) {
    if (dts.state === "waiting") ts.waiters = setAdd(ts.waiters, dts);
  }
  if (ts.waitingOn.size === 0) s.recommend(ts, "processing");
}

function waitingProcessing(s: SchedulerState, ts: TaskState): void {
  let ws: WorkerInfo | null;
  // Dask's `_transition_waiting_processing`: a root-ish task, with or without
  // inputs (all in memory by now), is queued when no worker has a free slot.
  if (Number.isFinite(s.options.workerSaturation) && isRootish(s, ts)) {
    ws = decideWorkerRootishQueuingEnabled(s);
    if (ws === null) {
      s.recommend(ts, "queued");
      return;
    }
  } else {
    ws = decideWorkerNonRootish(s, ts);
    if (ws === null) {
      s.recommend(ts, "no-worker");
      return;
    }
  }
  addToProcessing(s, ts, ws);
}

function waitingMemory(s: SchedulerState, ts: TaskState): void {
  // Race: a dependency was lost and the task sent back to waiting, but the
  // worker finished it before hearing `free-keys`. That worker drops it.
  if (s.validate) {
    assert(ts.processingOn === null, "waiting task is processing");
    assert(ts.waitingOn.size > 0, "waiting task is not waiting on anything");
  }
}

function waitingNoWorker(s: SchedulerState, ts: TaskState): void {
  ts.state = "no-worker";
  s.unrunnable.set(ts, s.clock());
  notifyNoWorker(s, ts);
}

function waitingQueued(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(s.idleTaskCount.size === 0, "task queued while a worker has free slots");
    for (const dts of itemsOf(ts.dependencies)) {
      assert(dts.whoHas.size > 0, () => `dependency ${dts.key} of a queued task is not in memory`);
    }
  }
  ts.state = "queued";
  s.queued.add(ts);
}

function waitingReleased(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "waiting task is in memory");
    assert(ts.processingOn === null, "waiting task is processing");
  }
  for (const dts of itemsOf(ts.dependencies)) {
    if (setDelete(dts.waiters, ts)) {
      if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
    }
  }
  ts.waitingOn = EMPTY;
  ts.state = "released";
  if (ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
  } else if (ts.exceptionBlame === null && (ts.whoWants.size > 0 || ts.waiters.size > 0)) {
    s.recommend(ts, "waiting");
  } else {
    ts.waiters = EMPTY;
  }
}

function queuedReleased(s: SchedulerState, ts: TaskState): void {
  s.queued.remove(ts);
  propagateReleased(s, ts);
}

function queuedProcessing(s: SchedulerState, ts: TaskState): void {
  const ws = decideWorkerRootishQueuingEnabled(s);
  if (ws === null) return; // stays queued
  s.queued.remove(ts);
  addToProcessing(s, ts, ws);
}

function queuedErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
  s.queued.remove(ts);
  propagateErred(s, ts, args);
}

function processingReleased(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "processing task is in memory");
    assert(ts.waitingOn.size === 0, "processing task is waiting on dependencies");
  }
  const ws = exitProcessing(s, ts);
  if (ws !== null) s.freeKeys(ws, ts.key);
  propagateReleased(s, ts);
}

function processingMemory(
  s: SchedulerState,
  ts: TaskState,
  args: TransitionArgs | undefined,
): void {
  assert(
    args !== undefined && args.kind === "memory",
    "processing → memory needs the worker's report",
  );
  if (s.validate) {
    assert(ts.processingOn !== null, "processing task has no worker");
    assert(ts.waitingOn.size === 0, "processing task is waiting on dependencies");
    assert(ts.whoHas.size === 0, "processing task is already in memory");
  }
  const ws = s.workers.get(args.worker);
  if (ws === undefined) {
    s.recommend(ts, "released");
    return;
  }
  assert(
    ws === ts.processingOn,
    () => `${ts.key} finished on ${args.worker} but was processing on ${ts.processingOn?.address}`,
  );
  const fn = ts.runSpec?.fn;
  if (fn !== undefined && args.startstops !== undefined) {
    for (const ss of args.startstops) {
      if (ss.action === "compute") s.observeDuration(fn, ss.stop - ss.start);
    }
  }
  if (args.nbytes !== null) setNbytes(s, ts, args.nbytes);
  exitProcessing(s, ts);
  // The actor's object lives where it ran, and nowhere else: the handles other
  // workers fetch later (as inputs, reported by `add-keys`) are replicas only.
  if (ts.actor) ws.actors.add(ts);
  addToMemory(s, ts, ws, args.typename);
  // The tasks of `fn` filed on a guessed duration are filed again (Dask's
  // stealing `transition` hook on `processing → memory`).
  if (fn !== undefined) s.workStealing.durationMeasured(s, fn);
}

function processingErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "processing task is in memory");
    assert(ts.waitingOn.size === 0, "processing task is waiting on dependencies");
  }
  const ws = exitProcessing(s, ts);
  // The worker does not know the task failed when the scheduler decided it:
  // without arguments, it errs because an input did (a lost actor, which errs
  // while its dependents run: see memoryReleased). Dask leaves it running there.
  if (
    ws !== null &&
    (args === undefined || (args.kind === "erred" && args.releaseOnWorker === true))
  )
    s.freeKeys(ws, ts.key);
  propagateErred(s, ts, args);
}

function noWorkerReleased(s: SchedulerState, ts: TaskState): void {
  s.unrunnable.delete(ts);
  propagateReleased(s, ts);
  notifyLeftNoWorker(s, ts);
}

function noWorkerProcessing(s: SchedulerState, ts: TaskState): void {
  const ws = decideWorkerNonRootish(s, ts);
  if (ws === null) return; // stays in no-worker
  s.unrunnable.delete(ts);
  addToProcessing(s, ts, ws);
  notifyLeftNoWorker(s, ts);
}

function noWorkerErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
  s.unrunnable.delete(ts);
  ts.noWorkerTold = null; // its clients hear `task-erred`
  propagateErred(s, ts, args);
}

function releasedForgotten(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "released task is in memory");
    assert(ts.processingOn === null, "released task is processing");
    assert(ts.waitingOn.size === 0, "released task is waiting on dependencies");
    assertForgettable(ts);
  }
  propagateForgotten(s, ts);
  removeKey(s, ts);
}

function memoryForgotten(s: SchedulerState, ts: TaskState): void {
  replicatedKeyLost(s, ts);
  if (s.retirements.size > 0) retirementKeyLost(s, ts);
  if (s.validate) {
    assert(ts.processingOn === null, "task in memory is processing");
    assert(ts.waitingOn.size === 0, "task in memory is waiting on dependencies");
    assertForgettable(ts);
  }
  propagateForgotten(s, ts);
  removeKey(s, ts);
}

function erredReleased(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.exceptionBlame !== null, "erred task has nothing to blame");
    assert(ts.whoHas.size === 0, "erred task is in memory");
    assert(ts.waitingOn.size === 0, "erred task is waiting on dependencies");
  }
  ts.exception = null;
  ts.traceback = null;
  ts.exceptionText = "";
  ts.tracebackText = "";
  ts.exceptionBlame = null;
  for (const dts of itemsOf(ts.dependents)) {
    if (dts.state === "erred") s.recommend(dts, "waiting");
  }
  for (const address of ts.erredOn) {
    const ws = s.workers.get(address);
    if (ws !== undefined) s.freeKeys(ws, ts.key);
  }
  ts.erredOn = EMPTY;
  s.sendToWhoWants(ts, { op: "task-retried", key: ts.key, stimulusId: s.stimulusId });
  ts.state = "released";
}

/** Why the clients of scattered data lose it when no worker holds it any more. */
export const SCATTERED_DATA_LOST =
  "scattered data lost: no worker holds it any more, and it cannot be computed again";

/**
 * Why a wanted actor errs when the worker it lived on is lost (the text of
 * Dask's `RuntimeError("Worker holding Actor was lost")`).
 */
export const ACTOR_LOST = "Worker holding Actor was lost";

/**
 * A wanted actor, just released, lost its object: it errs, blamed on itself,
 * rather than being computed again (Dask: "don't try to recreate"). The object
 * lived on one worker only, with a state its callers changed, and a new run
 * would make another object, not bring that one back. Its clients get
 * `task-erred` (no `lost-data`); released → erred errs its dependents not in
 * memory, those waiting on it included, with the same blame (not a released
 * one nobody wants: see releasedErred).
 */
function actorLost(s: SchedulerState, ts: TaskState): void {
  ts.exception = { name: "RuntimeError", message: ACTOR_LOST };
  ts.traceback = null;
  ts.exceptionText = `RuntimeError: ${ACTOR_LOST}`;
  ts.tracebackText = "";
  ts.exceptionBlame = ts;
  s.recommend(ts, "erred");
}

function memoryReleased(s: SchedulerState, ts: TaskState): void {
  replicatedKeyLost(s, ts);
  if (s.retirements.size > 0) retirementKeyLost(s, ts);
  if (s.validate) {
    assert(ts.waitingOn.size === 0, "task in memory is waiting on dependencies");
    assert(ts.processingOn === null, "task in memory is processing");
  }
  for (const ws of ts.whoHas) {
    if (s.workers.get(ws.address) === ws) s.freeKeys(ws, ts.key);
  }
  removeAllReplicas(s, ts);
  ts.state = "released";
  if (ts.runSpec === null) {
    // Scattered data: nothing can compute it again, so its clients lose it now, and
    // forgetting it cancels the tasks that need it. (Sending its waiters back to
    // waiting, as below, would have them recommend it to waiting in turn.)
    cancelForWanters(s, ts, SCATTERED_DATA_LOST);
    s.recommend(ts, "forgotten");
    return;
  }
  if (ts.actor && ts.whoWants.size > 0) {
    // Wanted, an actor leaves memory only when its object is lost: a client's
    // release, a cancel or a restart stops its wanting first. Unwanted, it goes
    // the usual way below (computed again for its waiters, or forgotten).
    actorLost(s, ts);
    return;
  }
  s.sendToWhoWants(ts, { op: "lost-data", key: ts.key, stimulusId: s.stimulusId });

  if (ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
  } else if (ts.whoWants.size > 0 || ts.waiters.size > 0) {
    // Dask skips this when a dependency erred, leaving a wanted key released
    // for good; here released → waiting turns it into erred with the blame.
    s.recommend(ts, "waiting");
  }
  for (const dts of itemsOf(ts.waiters)) {
    if (dts.state === "no-worker" || dts.state === "processing" || dts.state === "queued") {
      s.recommend(dts, "waiting");
    } else if (dts.state === "waiting") {
      dts.waitingOn = setAdd(dts.waitingOn, ts);
    }
  }
}

function releasedErred(s: SchedulerState, ts: TaskState): void {
  const failing = ts.exceptionBlame;
  assert(failing !== null, () => `${ts.key} erred with nothing to blame`);
  if (s.validate) {
    assert(ts.whoHas.size === 0, "released task is in memory");
    assert(ts.waitingOn.size === 0, "released task is waiting on dependencies");
  }
  for (const dts of itemsOf(ts.dependents)) {
    if (dts.whoHas.size === 0 && dts.state !== "erred") {
      if (dts.whoWants.size === 0 && dts.dependents.size === 0) {
        // Nobody needs it (its results just lost, its client gone): erred, it
        // would be held for good. Dask errs it all the same, and leaks it.
        s.recommend(dts, "forgotten");
        continue;
      }
      // Released and wanted by nobody, it is not in play for any task either
      // (a dependent in play would have it waiting): it stays released, as
      // processing → erred leaves such dependents. Wanted again, it errs then
      // if its input still is (released → waiting); erred now, it would be
      // computed for nobody when the input is retried (Dask errs it).
      if (dts.state === "released" && dts.whoWants.size === 0) continue;
      dts.exceptionBlame = failing;
      s.recommend(dts, "erred");
    }
  }
  reportErred(s, ts, failing);
  ts.state = "erred";
  // Dask leaves a fire-and-forget key erred this way held for good.
  doneForFireAndForget(s, ts);
}

/** The transition table, Dask's pairs exactly. */
export const TRANSITIONS: TransitionTable = {
  released: {
    waiting: releasedWaiting,
    forgotten: releasedForgotten,
    erred: releasedErred,
  },
  waiting: {
    released: waitingReleased,
    processing: waitingProcessing,
    "no-worker": waitingNoWorker,
    queued: waitingQueued,
    memory: waitingMemory,
  },
  queued: {
    released: queuedReleased,
    processing: queuedProcessing,
    erred: queuedErred,
  },
  processing: {
    released: processingReleased,
    memory: processingMemory,
    erred: processingErred,
  },
  "no-worker": {
    released: noWorkerReleased,
    processing: noWorkerProcessing,
    erred: noWorkerErred,
  },
  memory: {
    forgotten: memoryForgotten,
    released: memoryReleased,
  },
  erred: {
    released: erredReleased,
  },
  forgotten: {},
};

/** Every `(start, finish)` pair in the table. */
export function transitionPairs(): [SchedulerTaskStateName, SchedulerTaskStateName][] {
  const out: [SchedulerTaskStateName, SchedulerTaskStateName][] = [];
  for (const start of Object.keys(TRANSITIONS) as SchedulerTaskStateName[]) {
    for (const finish of Object.keys(TRANSITIONS[start]) as SchedulerTaskStateName[]) {
      out.push([start, finish]);
    }
  }
  return out;
}
