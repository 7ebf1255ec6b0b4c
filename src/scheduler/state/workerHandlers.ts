/**
 * The handlers of worker→scheduler messages (Dask's `stream_handlers` for
 * workers: `handle_task_finished`, `handle_task_erred`, `add_keys`,
 * `release_worker_data`, `_reschedule`, `handle_long_running`,
 * `handle_request_refresh_who_has`, and the stealing extension's
 * `move_task_confirm`). Messages from unknown workers, and stale ones (for a
 * task that moved on, or of an older run), are ignored or answered with
 * `free-keys`, as Dask does.
 */

import type {
  AddKeysMsg,
  LongRunningMsg,
  RequestRefreshWhoHasMsg,
  TaskErredMsg,
  TaskFinishedMsg,
  WorkerToSchedulerMessage,
} from "../../protocol/messagesWorker.ts";
import {
  addReplica,
  holderAddresses,
  isInvolved,
  isLostActor,
  removeReplica,
} from "./bookkeeping.ts";
import { unreachable } from "./events.ts";
import { occupancyRemove } from "./occupancy.ts";
import { replicaArrived, replicaFailed } from "./replicate.ts";
import { retirementCopyFailed, retirementReplicaAdded, retiringWorkerReported } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { handleStealResponse } from "./stealing.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";
import { registerWorker, workerStatusChange } from "./workerLifecycle.ts";

/** Dispatch one message from the worker at `address`. */
export function handleWorkerMessage(
  s: SchedulerState,
  address: string,
  msg: WorkerToSchedulerMessage,
): void {
  if (msg.op === "register-worker") {
    registerWorker(s, msg);
    return;
  }
  const ws = s.workers.get(address);
  if (ws === undefined) return; // a worker already removed: its news is stale
  ws.lastSeen = s.now;
  switch (msg.op) {
    case "heartbeat-worker":
      if (msg.spilled !== undefined) ws.spilled = msg.spilled;
      if (msg.memory !== undefined) ws.memory = msg.memory;
      return;
    case "worker-status-change":
      // A worker being retired stays paused until it is removed (or its retirement fails).
      if (!retiringWorkerReported(s, ws, msg.status)) workerStatusChange(s, ws, msg.status);
      return;
    case "task-finished":
      taskFinished(s, ws, msg);
      return;
    case "task-erred":
      taskErred(s, ws, msg);
      return;
    case "add-keys":
      addKeys(s, ws, msg);
      return;
    case "release-worker-data":
      releaseWorkerData(s, ws, msg.key);
      return;
    case "reschedule":
      reschedule(s, ws, msg.key);
      return;
    case "long-running":
      longRunning(s, ws, msg);
      return;
    case "request-refresh-who-has":
      requestRefreshWhoHas(s, ws, msg);
      return;
    case "steal-response":
      handleStealResponse(s, ws, msg);
      return;
    default:
      unreachable(msg, "worker message");
  }
}

/** `task-finished` (Dask's `stimulus_task_finished`). */
function taskFinished(s: SchedulerState, ws: WorkerInfo, msg: TaskFinishedMsg): void {
  const ts = s.tasks.get(msg.key);
  if (
    ts === undefined ||
    ts.state === "released" ||
    ts.state === "queued" ||
    ts.state === "no-worker" ||
    ts.state === "erred"
  ) {
    // Already computed elsewhere, released, or erred: the worker may drop it.
    s.freeKeys(ws, msg.key);
    return;
  }
  if (ts.runId !== msg.runId) {
    // A stale run. Its worker drops the result, unless that worker also holds
    // the current run's result, or runs a task that needs it and may be fetching
    // it (then the stale report changes nothing).
    if (ts.processingOn === ws) s.recommend(ts, "released");
    else if (!isInvolved(ts, ws)) s.freeKeys(ws, msg.key);
    return;
  }
  if (ts.state === "memory") {
    // The worker holds the result: a replica, as its add-keys would say (Dask's
    // add_keys), which settles a copy a replicate, rebalance or retirement waits for
    // there (its acquire-replicas finds the key in memory and reports nothing).
    replicaReported(s, ts, ws);
    return;
  }
  if (ts.state === "processing" && ts.processingOn !== ws) {
    // The current run, but from a worker it was not given to: no honest worker
    // sends that (a steal gives the task a new runId). Dask raises here; a
    // scheduler must not fall over for one bad peer: the sender drops it.
    s.freeKeys(ws, msg.key);
    return;
  }
  if (msg.metadata !== undefined && msg.metadata !== null && hasOwnKeys(msg.metadata)) {
    ts.metadata = { ...(ts.metadata ?? {}), ...msg.metadata };
  }
  s.transition(ts, "memory", {
    kind: "memory",
    worker: ws.address,
    nbytes: msg.nbytes,
    typename: msg.typename,
    startstops: msg.startstops,
  });
}

/** `task-erred` (Dask's `stimulus_task_erred`): retry while `retries` last, else err. */
function taskErred(s: SchedulerState, ws: WorkerInfo, msg: TaskErredMsg): void {
  const ts = s.tasks.get(msg.key);
  if (msg.fetchFailed === true && !(ts?.state === "processing" && ts.processingOn === ws)) {
    fetchFailed(s, ws, msg, ts);
    return;
  }
  if (ts === undefined) return;
  // A late report of the worker's own old run of a key since computed
  // elsewhere: stale, ignored as Dask ignores any report of a task in memory.
  if (ts.state === "memory" && !ts.whoHas.has(ws)) return;
  if (ts.state !== "processing") return;
  if (ts.runId !== msg.runId) {
    if (ts.processingOn === ws) s.recommend(ts, "released");
    return;
  }
  // The current run from a worker it was not given to (see taskFinished): ignored.
  if (ts.processingOn !== ws) return;
  retryOrErr(s, ts, ws, msg, false);
}

/**
 * A worker could not fetch `ts` from a holder for a reason other than the
 * network (the answer could not be sent or read: larger than
 * `maxMessageBytes`, say). Its state machine errs its copy, as Dask's does,
 * and its tasks that need `ts` would then wait forever (Dask's open deadlock,
 * dask/distributed#7060). Instead they retry or fail with that error. The
 * worker says so (`fetchFailed`): the report's run id is that of the worker's
 * task state (-1, or a stale run if the worker once computed the key itself),
 * which cannot tell a failed fetch from a late failure of an old run.
 */
function inputUnfetchable(
  s: SchedulerState,
  ws: WorkerInfo,
  ts: TaskState,
  msg: TaskErredMsg,
): void {
  const why: TaskErredMsg = {
    ...msg,
    exceptionText: `${msg.exceptionText} (while fetching its input ${ts.key})`,
  };
  for (const dts of [...ts.dependents]) {
    if (dts.state === "processing" && dts.processingOn === ws) retryOrErr(s, dts, ws, why, true);
  }
}

/**
 * `ws` could not fetch `msg.key` (`fetchFailed`): the tasks there that needed it
 * retry or err with the error, a copy asked for by `replicate` fails, and the
 * worker is told to free its erred copy (Dask ignores the report: the copy
 * stays on the worker for good), unless it still has business with the key.
 */
function fetchFailed(
  s: SchedulerState,
  ws: WorkerInfo,
  msg: TaskErredMsg,
  ts: TaskState | undefined,
): void {
  if (ts !== undefined && ts.state === "memory" && !ts.whoHas.has(ws)) {
    inputUnfetchable(s, ws, ts, msg);
    replicaFailed(s, ts, ws, `${ws.address} could not fetch it: ${msg.exceptionText}`);
    retirementCopyFailed(s, ts, ws);
  }
  if (ts === undefined || !isInvolved(ts, ws)) s.freeKeys(ws, msg.key);
}

/**
 * `ts`, processing on `ws`, failed: back to waiting while it has retries
 * left, else erred. `releaseOnWorker`: the worker does not know the task
 * failed, so it is told to drop it.
 */
function retryOrErr(
  s: SchedulerState,
  ts: TaskState,
  ws: WorkerInfo,
  msg: TaskErredMsg,
  releaseOnWorker: boolean,
): void {
  if (ts.retries > 0) {
    ts.retries--;
    s.transition(ts, "waiting");
    return;
  }
  s.transition(ts, "erred", {
    kind: "erred",
    worker: ws.address,
    exception: msg.exception,
    traceback: msg.traceback ?? null,
    exceptionText: msg.exceptionText,
    tracebackText: msg.tracebackText,
    releaseOnWorker,
  });
}

/** `ws` reports holding `ts`, in memory: a replica, and maybe a copy something waits for. */
function replicaReported(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  addReplica(s, ts, ws);
  replicaArrived(s, ts, ws);
  if (s.retirements.size > 0) retirementReplicaAdded(s, ts, ws);
}

/**
 * `add-keys`: the worker holds replicas (fetched from peers). Replicas of
 * keys not in memory are of no use: the worker is asked to drop them with
 * `remove-replicas`.
 */
function addKeys(s: SchedulerState, ws: WorkerInfo, msg: AddKeysMsg): void {
  let redundant: string[] | null = null;
  for (const key of msg.keys) {
    const ts = s.tasks.get(key);
    if (ts !== undefined && ts.state === "memory") {
      replicaReported(s, ts, ws);
    } else {
      (redundant ??= []).push(key);
    }
  }
  if (redundant !== null) {
    s.sendToWorker(ws, { op: "remove-replicas", keys: redundant, stimulusId: s.stimulusId });
  }
}

/**
 * `release-worker-data`: the worker dropped its replica; a key left without
 * replicas is released, and so is an actor whose object it was (the replicas
 * left are handles to it).
 */
function releaseWorkerData(s: SchedulerState, ws: WorkerInfo, key: string): void {
  const ts = s.tasks.get(key);
  if (ts === undefined || !ts.whoHas.has(ws)) return;
  removeReplica(s, ts, ws);
  if (ts.whoHas.size === 0 || isLostActor(ts)) s.recommend(ts, "released");
}

/** `reschedule`: the task asked to run elsewhere; it goes back through `released`. */
function reschedule(s: SchedulerState, ws: WorkerInfo, key: string): void {
  const ts = s.tasks.get(key);
  if (ts === undefined || ts.state !== "processing" || ts.processingOn !== ws) return;
  s.recommend(ts, "released");
}

/**
 * `long-running`: the task seceded from the thread pool. It no longer counts
 * towards the worker's occupancy or queuing slots, and cannot be stolen.
 */
function longRunning(s: SchedulerState, ws: WorkerInfo, msg: LongRunningMsg): void {
  const ts = s.tasks.get(msg.key);
  if (ts === undefined || ts.processingOn !== ws) return;
  if (msg.runId !== undefined && msg.runId !== ts.runId) return;
  if (ws.longRunning.has(ts)) return;
  const fn = ts.runSpec?.fn;
  if (fn !== undefined && msg.computeDuration !== null) s.observeDuration(fn, msg.computeDuration);
  occupancyRemove(s, ts, ws);
  ws.processing.set(ts, 0);
  ws.longRunning.add(ts);
  s.workStealing.removeKeyFromStealable(ts);
  s.workStealing.removeInFlight(s, ts);
  s.checkIdleSaturated(ws);
}

/**
 * `request-refresh-who-has`: answer with `refresh-who-has` for the known keys
 * and `free-keys` for the forgotten ones.
 */
function requestRefreshWhoHas(
  s: SchedulerState,
  ws: WorkerInfo,
  msg: RequestRefreshWhoHasMsg,
): void {
  let whoHas: Map<string, string[]> | null = null;
  let unknown: string[] | null = null;
  for (const key of msg.keys) {
    const ts = s.tasks.get(key);
    if (ts === undefined) {
      (unknown ??= []).push(key);
    } else {
      (whoHas ??= new Map()).set(key, holderAddresses(ts));
    }
  }
  if (whoHas !== null) {
    s.sendToWorker(ws, { op: "refresh-who-has", whoHas, stimulusId: s.stimulusId });
  }
  if (unknown !== null) {
    s.sendToWorker(ws, { op: "free-keys", keys: unknown, stimulusId: s.stimulusId });
  }
}

/** True if `o` has an own enumerable key: merging an empty `{}` would only allocate. */
function hasOwnKeys(o: object): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}
