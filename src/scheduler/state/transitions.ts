/**
 * The scheduler's transition table: `(start, finish) → function`, exactly the
 * pairs of Dask's `SchedulerState._TRANSITIONS_TABLE`. Any other pair goes
 * through `released` (see `SchedulerState.transition`).
 *
 * A transition function changes one task's state and the bookkeeping around
 * it, queues messages, and recommends further transitions with
 * `s.recommend(task, finish)`.
 */

import type { ComputeTaskMsg } from "../../protocol/messagesWorker.ts";
import { comparePriority } from "../../util/priority.ts";
import { assert } from "../../util/pyErrors.ts";
import type { StartStop } from "../../worker/state/taskState.ts";
import { notifyNoWorker } from "./notify.ts";
import {
  decideWorkerNonRootish,
  decideWorkerRootishQueuingEnabled,
  isQueueable,
} from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { EMPTY, setAdd, setDelete } from "./sets.ts";
import type { SchedulerTaskStateName, TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** A worker reported the task's result (`task-finished`): the arguments of `→ memory`. */
export interface MemoryArgs {
  readonly kind: "memory";
  readonly worker: string;
  readonly nbytes: number | null;
  readonly typename: string;
  readonly startstops?: readonly StartStop[];
}

/** The task raised, or a worker running it died too often: the arguments of `→ erred`. */
export interface ErredArgs {
  readonly kind: "erred";
  /** The worker it erred on, if any. */
  readonly worker: string | null;
  readonly exception: unknown;
  readonly traceback: unknown;
  readonly exceptionText: string;
  readonly tracebackText: string;
}

/** Extra arguments some transitions take when a handler calls them directly. */
export type TransitionArgs = MemoryArgs | ErredArgs;

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

// ---------------------------------------------------------------------------
// Shared steps
// ---------------------------------------------------------------------------

/** Note that `ws` holds a replica of `ts`. */
export function addReplica(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  if (ws.hasWhat.has(ts)) return;
  ws.hasWhat.add(ts);
  ws.nbytes += s.getNbytes(ts);
  ts.whoHas = setAdd(ts.whoHas, ws);
}

/** Note that `ws` no longer holds a replica of `ts`. */
export function removeReplica(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  if (!ws.hasWhat.delete(ts)) return;
  ws.nbytes -= s.getNbytes(ts);
  setDelete(ts.whoHas, ws);
}

function removeAllReplicas(s: SchedulerState, ts: TaskState): void {
  if (ts.whoHas.size === 0) return;
  const nbytes = s.getNbytes(ts);
  for (const ws of ts.whoHas) {
    ws.nbytes -= nbytes;
    ws.hasWhat.delete(ts);
  }
  ts.whoHas = EMPTY;
}

/** Set the size of a result, adjusting the totals of the workers holding it. */
function setNbytes(s: SchedulerState, ts: TaskState, nbytes: number): void {
  const diff = nbytes - s.getNbytes(ts);
  for (const ws of ts.whoHas) ws.nbytes += diff;
  ts.nbytes = nbytes;
}

function freeKeysOn(s: SchedulerState, ws: WorkerInfo, ts: TaskState): void {
  s.sendToWorker(ws, { op: "free-keys", keys: [ts.key], stimulusId: s.stimulusId });
}

function acquireResources(ts: TaskState, ws: WorkerInfo): void {
  const r = ts.resourceRestrictions;
  if (r === null) return;
  for (const name in r) ws.usedResources[name] = (ws.usedResources[name] ?? 0) + r[name];
}

function releaseResources(ts: TaskState, ws: WorkerInfo): void {
  const r = ts.resourceRestrictions;
  if (r === null) return;
  for (const name in r) ws.usedResources[name] -= r[name];
}

/** The `compute-task` message for `ts`, with a fresh run id. */
function computeTaskMsg(s: SchedulerState, ts: TaskState, duration: number): ComputeTaskMsg {
  ts.runId = ++s.runIdCounter;
  const whoHas: Record<string, string[]> = {};
  const nbytes: Record<string, number> = {};
  for (const dts of ts.dependencies) {
    const holders: string[] = [];
    for (const ws of dts.whoHas) holders.push(ws.address);
    whoHas[dts.key] = holders;
    nbytes[dts.key] = s.getNbytes(dts);
  }
  return {
    op: "compute-task",
    key: ts.key,
    runId: ts.runId,
    whoHas,
    nbytes,
    priority: ts.priority,
    duration,
    runSpec: ts.runSpec,
    resourceRestrictions: ts.resourceRestrictions ?? {},
    actor: ts.actor,
    annotations: ts.annotations ?? {},
    spanId: null,
    stimulusId: s.stimulusId,
  };
}

/** Assign `ts` to `ws` and send it `compute-task` (Dask's `_add_to_processing`). */
export function addToProcessing(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  if (s.validate) {
    assert(ts.waitingOn.size === 0, "task to process is waiting on dependencies");
    assert(ts.whoHas.size === 0, "task to process is in memory");
    assert(ts.processingOn === null, "task to process is already processing");
    assert(s.running.has(ws), () => `worker ${ws.address} is not running`);
    for (const dts of ts.dependencies) {
      assert(dts.whoHas.size > 0, () => `dependency ${dts.key} is not in memory`);
    }
  }
  const duration = s.taskDuration(ts);
  ws.processing.set(ts, duration);
  ws.occupancy += duration;
  ts.processingOn = ws;
  ts.state = "processing";
  acquireResources(ts, ws);
  s.checkIdleSaturated(ws);
  s.nTasks++;
  s.sendToWorker(ws, computeTaskMsg(s, ts, duration));
}

/**
 * Take `ts` off its worker (Dask's `_exit_processing_common`). Returns the
 * worker, or null if it has since been removed from the cluster.
 */
export function exitProcessing(s: SchedulerState, ts: TaskState): WorkerInfo | null {
  const ws = ts.processingOn;
  assert(ws !== null, () => `${ts.key} is not processing on any worker`);
  ts.processingOn = null;
  const duration = ws.processing.get(ts) ?? 0;
  ws.processing.delete(ts);
  ws.longRunning.delete(ts);
  ws.occupancy = ws.processing.size === 0 ? 0 : ws.occupancy - duration;
  s.steals.delete(ts);
  if (s.workers.get(ws.address) !== ws) return null;
  releaseResources(ts, ws);
  s.checkIdleSaturated(ws);
  return ws;
}

/** Scratch for the dependents made ready by one result. */
const readyScratch: TaskState[] = [];

/** The result of `ts` is on `ws` (Dask's `_add_to_memory`). */
function addToMemory(s: SchedulerState, ts: TaskState, ws: WorkerInfo, typename: string): void {
  addReplica(s, ts, ws);

  // Dependents this result makes ready; recommended worst priority first, so
  // that the best is processed first (the work list is last in, first out).
  const ready = readyScratch;
  ready.length = 0;
  for (const dts of ts.dependents) {
    if (setDelete(dts.waitingOn, ts) && dts.waitingOn.size === 0) ready.push(dts);
  }
  if (ready.length > 1) ready.sort((a, b) => comparePriority(b.priority, a.priority));
  for (const dts of ready) s.recommend(dts, "processing");
  ready.length = 0;

  for (const dts of ts.dependencies) {
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
}

/** `ts` is now released; recommend what follows (Dask's `_propagate_released`). */
function propagateReleased(s: SchedulerState, ts: TaskState): void {
  ts.state = "released";
  let toWaiting = false;
  if (ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
  } else if (ts.waiters.size > 0 || ts.whoWants.size > 0) {
    s.recommend(ts, "waiting");
    toWaiting = true;
  }
  if (!toWaiting) {
    for (const dts of ts.dependencies) {
      if (dts.state !== "released") {
        setDelete(dts.waiters, ts);
        if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
      }
    }
    ts.waiters = EMPTY;
  }
}

/** The key of the task to blame and the texts to report for an erred task. */
function reportErred(s: SchedulerState, ts: TaskState, failing: TaskState): void {
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
function propagateErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
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

  for (const dts of ts.waiters) {
    dts.exceptionBlame = failing;
    s.recommend(dts, "erred");
  }
  for (const dts of ts.dependencies) {
    setDelete(dts.waiters, ts);
    if (dts.waiters.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "released");
  }
  ts.waiters = EMPTY;
  reportErred(s, ts, failing);
}

/** `ts` is being forgotten: unlink it from the graph (Dask's `_propagate_forgotten`). */
function propagateForgotten(s: SchedulerState, ts: TaskState): void {
  ts.state = "forgotten";
  for (const dts of ts.dependents) {
    dts.hasLostDependencies = true;
    setDelete(dts.dependencies, ts);
    setDelete(dts.waitingOn, ts);
    if (dts.state !== "memory" && dts.state !== "erred") s.recommend(dts, "forgotten");
  }
  ts.dependents = EMPTY;
  ts.waiters = EMPTY;
  for (const dts of ts.dependencies) {
    setDelete(dts.dependents, ts);
    setDelete(dts.waiters, ts);
    if (dts.dependents.size === 0 && dts.whoWants.size === 0) s.recommend(dts, "forgotten");
  }
  ts.dependencies = EMPTY;
  ts.waitingOn = EMPTY;
  for (const ws of ts.whoHas) {
    if (s.workers.get(ws.address) === ws) freeKeysOn(s, ws, ts);
  }
  removeAllReplicas(s, ts);
}

/** Remove a forgotten task from the scheduler, telling any client that still wanted it. */
function removeKey(s: SchedulerState, ts: TaskState): void {
  if (ts.whoWants.size > 0) {
    s.sendToWhoWants(ts, {
      op: "cancelled-keys",
      keys: [ts.key],
      reason: "already forgotten",
      stimulusId: s.stimulusId,
    });
    for (const cs of ts.whoWants) cs.wantsWhat.delete(ts);
    ts.whoWants = EMPTY;
  }
  if (s.tasks.get(ts.key) === ts) s.tasks.delete(ts.key);
  s.unrunnable.delete(ts);
  ts.processingOn = null;
  ts.exceptionBlame = null;
  ts.exception = null;
  ts.traceback = null;
}

/** A task must not be forgotten while something still needs it. */
function assertForgettable(ts: TaskState): void {
  assert(
    ts.runSpec === null ||
      ts.hasLostDependencies ||
      (ts.whoWants.size === 0 && ts.waiters.size === 0 && ts.dependents.size === 0),
    () => `${ts.key} is still needed and cannot be forgotten`,
  );
}

// ---------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------

function releasedWaiting(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.runSpec !== null, "task without a run spec cannot wait");
    assert(ts.waitingOn.size === 0, "released task is waiting on dependencies");
    assert(ts.whoHas.size === 0, "released task is in memory");
    assert(ts.processingOn === null, "released task is processing");
    for (const dts of ts.dependencies) {
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
  for (const dts of ts.dependencies) {
    if (dts.state === "erred") {
      ts.exceptionBlame = dts.exceptionBlame;
      s.recommend(ts, "erred");
      return;
    }
  }
  ts.state = "waiting";
  for (const dts of ts.dependencies) {
    if (dts.whoHas.size === 0) ts.waitingOn = setAdd(ts.waitingOn, dts);
    if (dts.state === "released") s.recommend(dts, "waiting");
    else dts.waiters = setAdd(dts.waiters, ts);
  }
  ts.waiters = EMPTY;
  for (const dts of ts.dependents) {
    if (dts.state === "waiting") ts.waiters = setAdd(ts.waiters, dts);
  }
  if (ts.waitingOn.size === 0) s.recommend(ts, "processing");
}

function waitingProcessing(s: SchedulerState, ts: TaskState): void {
  let ws: WorkerInfo | null;
  if (isQueueable(ts) && Number.isFinite(s.options.workerSaturation)) {
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
  ts.state = "queued";
  s.queued.add(ts);
}

function waitingReleased(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "waiting task is in memory");
    assert(ts.processingOn === null, "waiting task is processing");
  }
  for (const dts of ts.dependencies) {
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
  if (ws !== null) freeKeysOn(s, ws, ts);
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
  addToMemory(s, ts, ws, args.typename);
}

function processingErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
  if (s.validate) {
    assert(ts.whoHas.size === 0, "processing task is in memory");
    assert(ts.waitingOn.size === 0, "processing task is waiting on dependencies");
  }
  exitProcessing(s, ts);
  propagateErred(s, ts, args);
}

function noWorkerReleased(s: SchedulerState, ts: TaskState): void {
  s.unrunnable.delete(ts);
  propagateReleased(s, ts);
}

function noWorkerProcessing(s: SchedulerState, ts: TaskState): void {
  const ws = decideWorkerNonRootish(s, ts);
  if (ws === null) return; // stays in no-worker
  s.unrunnable.delete(ts);
  addToProcessing(s, ts, ws);
}

function noWorkerErred(s: SchedulerState, ts: TaskState, args: TransitionArgs | undefined): void {
  s.unrunnable.delete(ts);
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
  for (const dts of ts.dependents) {
    if (dts.state === "erred") s.recommend(dts, "waiting");
  }
  for (const address of ts.erredOn) {
    const ws = s.workers.get(address);
    if (ws !== undefined) freeKeysOn(s, ws, ts);
  }
  ts.erredOn = EMPTY;
  s.sendToWhoWants(ts, { op: "task-retried", key: ts.key, stimulusId: s.stimulusId });
  ts.state = "released";
}

function memoryReleased(s: SchedulerState, ts: TaskState): void {
  if (s.validate) {
    assert(ts.waitingOn.size === 0, "task in memory is waiting on dependencies");
    assert(ts.processingOn === null, "task in memory is processing");
  }
  for (const ws of ts.whoHas) {
    if (s.workers.get(ws.address) === ws) freeKeysOn(s, ws, ts);
  }
  removeAllReplicas(s, ts);
  ts.state = "released";
  s.sendToWhoWants(ts, { op: "lost-data", key: ts.key, stimulusId: s.stimulusId });

  if (ts.runSpec === null || ts.hasLostDependencies) {
    s.recommend(ts, "forgotten");
  } else if (ts.whoWants.size > 0 || ts.waiters.size > 0) {
    // Dask skips this when a dependency erred, leaving a wanted key released
    // for good; here released → waiting turns it into erred with the blame.
    s.recommend(ts, "waiting");
  }
  for (const dts of ts.waiters) {
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
  for (const dts of ts.dependents) {
    if (dts.whoHas.size === 0 && dts.state !== "erred") {
      dts.exceptionBlame = failing;
      s.recommend(dts, "erred");
    }
  }
  reportErred(s, ts, failing);
  ts.state = "erred";
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
