/**
 * The bookkeeping shared by transitions and handlers: replicas and their
 * sizes, a task's place in its worker's processing set, resources, and the
 * `compute-task` message.
 */

import type { ComputeTaskMsg } from "../../protocol/messagesWorker.ts";
import { formatBytes } from "../../util/parseBytes.ts";
import { assert } from "../../util/pyErrors.ts";
import { occupancyAdd, occupancyRemove } from "./occupancy.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { EMPTY, itemsOf, sharedAdd, sharedRemove } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * True if `ws` holds `ts`, runs it, or runs a task that needs it (and so may
 * be fetching it): there a `free-keys` of the key would release what the
 * scheduler counts on.
 */
export function isInvolved(ts: TaskState, ws: WorkerInfo): boolean {
  return ts.whoHas.has(ws) || ts.processingOn === ws || runsDependentOf(ts, ws);
}

/**
 * True if a task that needs `ts` is processing on `ws`: there `ts` must stay
 * (the seed's worker raises if told to drop a key while a task needing it
 * executes).
 */
export function runsDependentOf(ts: TaskState, ws: WorkerInfo): boolean {
  for (const dts of itemsOf(ts.dependents)) if (dts.processingOn === ws) return true;
  return false;
}

/** The addresses of the workers holding `ts`. */
export function holderAddresses(ts: TaskState): string[] {
  const out: string[] = [];
  for (const ws of ts.whoHas) out.push(ws.address);
  return out;
}

/** Note that `ws` holds a replica of `ts`. */
export function addReplica(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  if (ws.hasWhat.has(ts)) return;
  ws.hasWhat.add(ts);
  ws.nbytes += s.getNbytes(ts);
  ts.whoHas = sharedAdd(ts.whoHas, ws);
  if (ts.whoHas.size === 2) s.replicatedTasks.add(ts);
}

/**
 * Note that `ws` no longer holds a replica of `ts`. For an actor, the replica
 * on the worker where it lives is the object itself: the worker no longer has
 * that actor either.
 */
export function removeReplica(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  if (!ws.hasWhat.delete(ts)) return;
  s.replicaRemovals++;
  ws.nbytes -= s.getNbytes(ts);
  ts.whoHas = sharedRemove(ts.whoHas, ws);
  if (ts.actor) ws.actors.delete(ts);
  if (ts.whoHas.size === 1) s.replicatedTasks.delete(ts);
  else if (ts.whoHas.size === 0) forgetReplicasWanted(ts);
}

/** Note that no worker holds `ts` any more (an actor's object included: see {@link removeReplica}). */
export function removeAllReplicas(s: SchedulerState, ts: TaskState): void {
  if (ts.whoHas.size === 0) return;
  s.replicaRemovals++;
  const nbytes = s.getNbytes(ts);
  for (const ws of ts.whoHas) {
    ws.nbytes -= nbytes;
    ws.hasWhat.delete(ts);
    if (ts.actor) ws.actors.delete(ts);
  }
  ts.whoHas = EMPTY;
  s.replicatedTasks.delete(ts);
  forgetReplicasWanted(ts);
}

/** The key left memory: the replicas `replicate` asked for no longer apply. */
function forgetReplicasWanted(ts: TaskState): void {
  ts.replicasWanted = 0;
  ts.replicasWantedOn = null;
}

/**
 * True if `ts` is an actor whose object no worker holds any more: the worker
 * it lived on dropped it or was lost, and only handles to it (fetched by other
 * workers as inputs, and naming that worker) are left, if any. Such a result
 * is as good as gone, and is released as if no worker held it.
 */
export function isLostActor(ts: TaskState): boolean {
  if (!ts.actor || ts.state !== "memory") return false;
  for (const ws of ts.whoHas) if (ws.actors.has(ts)) return false;
  return true;
}

/** Set the size of a result, adjusting the totals of the workers holding it. */
export function setNbytes(s: SchedulerState, ts: TaskState, nbytes: number): void {
  const diff = nbytes - s.getNbytes(ts);
  for (const ws of ts.whoHas) ws.nbytes += diff;
  ts.nbytes = nbytes;
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

/**
 * The empty `whoHas`, `nbytes`, restrictions and annotations of the messages
 * of tasks without any: one frozen object (messages are never modified).
 */
const NONE: Record<string, never> = Object.freeze({});
/** The `whoHas` and `nbytes` of a task without dependencies (never mutated: the worker only reads them). */
const NO_DEPENDENCIES: ReadonlyMap<string, never> = new Map<string, never>();

/** The `compute-task` message for `ts`, with a fresh run id. */
function computeTaskMsg(s: SchedulerState, ts: TaskState, duration: number): ComputeTaskMsg {
  ts.runId = ++s.runIdCounter;
  let whoHas: ReadonlyMap<string, string[]> = NO_DEPENDENCIES;
  let nbytes: ReadonlyMap<string, number> = NO_DEPENDENCIES;
  if (ts.dependencies.size > 0) {
    const holdersOf = new Map<string, string[]>();
    const sizes = new Map<string, number>();
    for (const dts of itemsOf(ts.dependencies)) {
      holdersOf.set(dts.key, holderAddresses(dts));
      sizes.set(dts.key, s.getNbytes(dts));
    }
    whoHas = holdersOf;
    nbytes = sizes;
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
    resourceRestrictions: ts.resourceRestrictions ?? NONE,
    actor: ts.actor,
    annotations: ts.annotations ?? NONE,
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
    for (const dts of itemsOf(ts.dependencies)) {
      assert(dts.whoHas.size > 0, () => `dependency ${dts.key} is not in memory`);
    }
  }
  const duration = occupancyAdd(s, ts, ws);
  ws.processing.set(ts, duration);
  ts.processingOn = ws;
  ts.state = "processing";
  // Dask counts an actor on its worker from the moment it is assigned there:
  // the objective that spreads actors counts those on their way too.
  if (ts.actor) ws.actors.add(ts);
  acquireResources(ts, ws);
  s.workStealing.putKeyInStealable(s, ts);
  s.checkIdleSaturated(ws);
  s.nTasks++;
  const tooLarge = inputsTooLarge(ts, ws);
  if (tooLarge !== null) {
    // As Dask: a crude guard against order-of-magnitude mistakes (a task
    // gathering a whole collection), which would kill every worker it is tried on.
    s.transition(ts, "erred", {
      kind: "erred",
      worker: ws.address,
      exception: { name: "MemoryError", message: tooLarge },
      traceback: null,
      exceptionText: `MemoryError: ${tooLarge}`,
      tracebackText: "",
    });
    return;
  }
  s.sendToWorker(ws, computeTaskMsg(s, ts, duration));
}

/**
 * The bytes of the inputs of `ts` that the memory-limit check weighs (Dask's
 * `_add_to_processing`): the sum of its dependencies' known sizes.
 */
export function inputsNbytes(ts: TaskState): number {
  let bytes = 0;
  for (const dts of itemsOf(ts.dependencies)) if (dts.nbytes > 0) bytes += dts.nbytes;
  return bytes;
}

/**
 * True if `ws` may be given a task whose inputs total `bytes` (see
 * {@link inputsNbytes}): it has no `memoryLimit`, or they fit in it. The one
 * predicate of the memory-limit check: work stealing chooses its thieves by
 * it too, so that a steal never fails a task its victim would have run.
 */
export function fitsMemoryLimit(ws: WorkerInfo, bytes: number): boolean {
  const limit = ws.memoryLimit;
  return limit === null || !(limit > 0) || bytes <= limit;
}

/**
 * Why `ts` cannot run on `ws`: its inputs together are larger than the
 * worker's `memoryLimit` (Dask's `_add_to_processing`); null if they are not,
 * or the worker has no limit.
 */
function inputsTooLarge(ts: TaskState, ws: WorkerInfo): string | null {
  const limit = ws.memoryLimit;
  if (limit === null || ts.dependencies.size === 0) return null;
  const bytes = inputsNbytes(ts);
  if (fitsMemoryLimit(ws, bytes)) return null;
  return (
    `Task ${ts.key} has ${formatBytes(bytes)} worth of input dependencies, ` +
    `but worker ${ws.address} has memory_limit set to ${formatBytes(limit)}.`
  );
}

/**
 * Take `ts` off its worker (Dask's `_exit_processing_common`). Returns the
 * worker, or null if it has since been removed from the cluster.
 */
export function exitProcessing(s: SchedulerState, ts: TaskState): WorkerInfo | null {
  const ws = ts.processingOn;
  assert(ws !== null, () => `${ts.key} is not processing on any worker`);
  s.workStealing.leftProcessing(ts);
  s.workStealing.removeInFlight(s, ts);
  ts.processingOn = null;
  if (!ws.longRunning.delete(ts)) occupancyRemove(s, ts, ws);
  ws.processing.delete(ts);
  // An actor that finishes here is counted here again as it reaches memory
  // (processing → memory); any other way out of processing takes it off.
  if (ts.actor) ws.actors.delete(ts);
  if (s.workers.get(ws.address) !== ws) return null;
  releaseResources(ts, ws);
  s.checkIdleSaturated(ws);
  return ws;
}
