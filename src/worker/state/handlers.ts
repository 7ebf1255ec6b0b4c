import { assert, KeyError, RuntimeError, setRemove } from "../../util/pyErrors.ts";
import { showValue } from "../../util/showValue.ts";
import type {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteDoneEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepDoneEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  StateMachineEvent,
  StealRequestEvent,
  UpdateDataEvent,
} from "./events.ts";
import {
  type Instruction,
  RequestRefreshWhoHasMsg,
  RetryBusyWorkerLater,
  StealResponseMsg,
} from "./instructions.ts";
import { type Finish, Recs } from "./recs.ts";
import { EMPTY_RESOURCES, RUN_ID_SENTINEL, TaskState, withoutHolder } from "./taskState.ts";
import type { WorkerState } from "./workerState.ts";

/**
 * Dispatch an event to its handler. Handlers push instructions to `out` and return
 * recommendations. The switch is exhaustive: a new event class without a handler
 * does not compile.
 */
export function handleEvent(
  ws: WorkerState,
  ev: StateMachineEvent,
  out: Instruction[],
): Recs | null {
  switch (ev.cls) {
    case "UpdateDataEvent":
      return handleUpdateData(ws, ev);
    case "FreeKeysEvent":
      return handleFreeKeys(ws, ev);
    case "RemoveReplicasEvent":
      return handleRemoveReplicas(ws, ev);
    case "AcquireReplicasEvent":
      return handleAcquireReplicas(ws, ev);
    case "ComputeTaskEvent":
      return handleComputeTask(ws, ev, out);
    case "GatherDepSuccessEvent":
      return handleGatherDepSuccess(ws, ev);
    case "GatherDepBusyEvent":
      return handleGatherDepBusy(ws, ev, out);
    case "GatherDepNetworkFailureEvent":
      return handleGatherDepNetworkFailure(ws, ev);
    case "GatherDepFailureEvent":
      return handleGatherDepFailure(ws, ev);
    case "RemoveWorkerEvent":
      return handleRemoveWorker(ws, ev);
    case "SecedeEvent":
      return handleSecede(ws, ev);
    case "StealRequestEvent":
      return handleStealRequest(ws, ev, out);
    case "PauseEvent":
      ws.running = false;
      return null;
    case "UnpauseEvent":
      ws.running = true;
      return ws.ensureComputing();
    case "RetryBusyWorkerEvent":
      return handleRetryBusyWorker(ws, ev);
    case "CancelComputeEvent":
      return handleCancelCompute(ws, ev);
    case "ExecuteSuccessEvent":
      return handleExecuteSuccess(ws, ev);
    case "ExecuteFailureEvent":
      return handleExecuteFailure(ws, ev);
    case "RescheduleEvent":
      return handleReschedule(ws, ev);
    case "FindMissingEvent":
      return handleFindMissing(ws, ev, out);
    case "RefreshWhoHasEvent":
      return handleRefreshWhoHas(ws, ev);
    default: {
      const unknown: never = ev;
      const cls: unknown = (unknown as { cls?: unknown }).cls;
      throw new TypeError(`not a StateMachineEvent: unknown class ${showValue(cls)}`);
    }
  }
}

/** Scatter: values put straight into this worker. */
function handleUpdateData(ws: WorkerState, ev: UpdateDataEvent): Recs | null {
  const recs = new Recs();
  for (const [key, value] of ev.data) {
    let ts = ws.tasks.get(key);
    if (ts === undefined) {
      ts = new TaskState(key);
      ws.tasks.set(key, ts);
      ws.taskCounter.newTask(ts);
    }
    recs.set(ts, ["memory", value, RUN_ID_SENTINEL]);
    ws.log.add5(key, "receive-from-scatter", ts.state, ev.stimulusId, ws.stimulusTime);
  }
  return recs;
}

/**
 * The scheduler no longer needs these keys. The worker may still hold on to a task
 * another one depends on.
 */
function handleFreeKeys(ws: WorkerState, ev: FreeKeysEvent): Recs | null {
  ws.log.add4("free-keys", ev.keys, ev.stimulusId, ws.stimulusTime);
  const recs = new Recs();
  for (const key of ev.keys) {
    const ts = ws.tasks.get(key);
    if (ts !== undefined) recs.set(ts, "released");
  }
  return recs;
}

/**
 * The scheduler says this worker may hold superfluous replicas; only tasks in memory
 * are released (free-keys is the stronger request).
 */
function handleRemoveReplicas(ws: WorkerState, ev: RemoveReplicasEvent): Recs | null {
  const recs = new Recs();
  for (const key of ev.keys) {
    const ts = ws.tasks.get(key);
    if (ts === undefined || ts.state !== "memory") continue;
    // A running dependent may still be about to read this value: the scheduler
    // should never ask for it.
    for (const dep of ts.dependents) {
      if (dep.state === "executing" || dep.state === "long-running") {
        throw new RuntimeError(
          `Cannot remove replica of '${ts.key}' while '${dep.key}' in state '${dep.state}'.`,
        );
      }
    }
    ws.log.add4(ts.key, "remove-replica", ev.stimulusId, ws.stimulusTime);
    recs.set(ts, "released");
  }
  return recs;
}

function handleAcquireReplicas(ws: WorkerState, ev: AcquireReplicasEvent): Recs | null {
  if (ws.validate) checkHolders(ev.whoHas, ev.nbytes, false);
  const recs = new Recs();
  for (const [key, nbytes] of ev.nbytes) {
    // After the inputs of computations with default or high priority, before those of
    // low-priority ones (compute(priority=) is negated on its way here).
    const ts = ws.ensureTaskExists(key, ACQUIRE_PRIORITY, ev.stimulusId);
    if (ts.state !== "memory") {
      ts.nbytes = nbytes;
      recs.set(ts, "fetch");
    }
  }
  ws.updateWhoHas(ev.whoHas);
  return recs;
}

const ACQUIRE_PRIORITY = [1] as const;

function handleComputeTask(ws: WorkerState, ev: ComputeTaskEvent, out: Instruction[]): Recs | null {
  let ts = ws.tasks.get(ev.key);
  if (ts === undefined) {
    ts = new TaskState(ev.key);
    ws.tasks.set(ev.key, ts);
    ws.taskCounter.newTask(ts);
  }
  ws.log.add5(ev.key, "compute-task", ts.state, ev.stimulusId, ws.stimulusTime);
  ts.runId = ev.runId;

  switch (ts.state) {
    case "ready":
    case "constrained":
    case "executing":
    case "long-running":
    case "waiting":
      return null;
    case "memory":
      out.push(ws.getTaskFinishedMsg(ts, ev.runId, ev.stimulusId));
      return null;
    case "released":
    case "fetch":
    case "flight":
    case "missing":
    case "cancelled":
    case "resumed":
    case "error":
      break;
    default:
      throw new RuntimeError(
        `Unexpected task state encountered for ${ts}; stimulus_id=${ev.stimulusId}; story=${JSON.stringify(ws.story(ts))}`,
      );
  }

  const recs = Recs.of(ts, "waiting");
  ts.runSpec = ev.runSpec;
  const priority = withGeneration(ev.priority, ws.generation);
  ws.generation -= 1;
  if (ev.actor) ws.actors.set(ts.key, null);

  ts.exception = null;
  ts.traceback = null;
  ts.exceptionText = "";
  ts.tracebackText = "";
  ts.priority = priority;
  ts.duration = ev.duration;
  ts.annotations = ev.annotations;
  ts.spanId = ev.spanId;

  // A task computed twice may still be running with the resources of the first
  // request: keep them, so that they are released correctly when it completes.
  if (
    !(
      (ts.state === "cancelled" || ts.state === "resumed") &&
      (ts.previous === "executing" || ts.previous === "long-running")
    )
  ) {
    ts.resourceRestrictions =
      ev.resourceRestrictions.size === 0 ? EMPTY_RESOURCES : ev.resourceRestrictions;
  }

  if (ws.validate) checkHolders(ev.whoHas, ev.nbytes, true);

  for (const [depKey, nbytes] of ev.nbytes) {
    const depTs = ws.ensureTaskExists(depKey, priority, ev.stimulusId);
    if (depTs.state !== "memory") depTs.nbytes = nbytes;
    ts.addDependency(depTs);
  }
  ws.updateWhoHas(ev.whoHas);
  return recs;
}

/**
 * Shared by the handlers of all GatherDep completions: the tasks leaving flight (also
 * cancelled or resumed ones; after a scatter, even tasks in memory or error).
 */
function gatherDepDoneCommon(ws: WorkerState, ev: GatherDepDoneEvent): TaskState[] {
  ws.transferIncomingBytes -= ev.totalNbytes;
  const keys = ws.inFlightWorkers.get(ev.worker);
  if (keys === undefined) {
    throw new KeyError(
      ev.worker,
      `${JSON.stringify(ev.worker)} (no transfer from this peer is in flight)`,
    );
  }
  ws.inFlightWorkers.delete(ev.worker);
  const out: TaskState[] = [];
  for (const key of keys) {
    const ts = ws.task(key);
    ts.done = true;
    ts.comingFrom = null;
    setRemove(ws.inFlightTasks, ts);
    out.push(ts);
  }
  return out;
}

/** The peer answered; it may have sent fewer keys than asked. */
function handleGatherDepSuccess(ws: WorkerState, ev: GatherDepSuccessEvent): Recs | null {
  const recs = new Recs();
  for (const ts of gatherDepDoneCommon(ws, ev)) {
    if (ev.data.has(ts.key)) {
      recs.set(ts, ["memory", ev.data.get(ts.key), ts.runId]);
    } else {
      ws.log.add4(ts.key, "missing-dep", ev.stimulusId, ws.stimulusTime);
      if (ws.validate) {
        assert(ts.state !== "fetch");
        assert(!ws.dataNeededFor(ev.worker).has(ts));
      }
      ts.whoHas = withoutHolder(ts.whoHas, ev.worker);
      ws.hasWhat.get(ev.worker)?.delete(ts.key);
      recs.set(ts, "fetch");
    }
  }
  return recs;
}

/** The peer is busy: try other replicas now, and this peer again later. */
function handleGatherDepBusy(
  ws: WorkerState,
  ev: GatherDepBusyEvent,
  out: Instruction[],
): Recs | null {
  ws.busyWorkers.add(ev.worker);
  const recs = new Recs();
  const refreshWhoHas: string[] = [];
  for (const ts of gatherDepDoneCommon(ws, ev)) {
    recs.set(ts, "fetch");
    let anyIdle = false;
    for (const w of ts.whoHas) {
      if (!ws.busyWorkers.has(w)) {
        anyIdle = true;
        break;
      }
    }
    if (!anyIdle) refreshWhoHas.push(ts.key);
  }
  out.push(new RetryBusyWorkerLater(ev.worker, ev.stimulusId));
  // Every known holder is busy: ask the scheduler for others.
  if (refreshWhoHas.length > 0) out.push(new RequestRefreshWhoHasMsg(refreshWhoHas, ev.stimulusId));
  return recs;
}

/**
 * The network failed. The failure may be transient, but the peer is treated as dead
 * (all its keys dropped, even those not being fetched): the fetch then moves on to
 * another replica or to the scheduler at once.
 */
function handleGatherDepNetworkFailure(
  ws: WorkerState,
  ev: GatherDepNetworkFailureEvent,
): Recs | null {
  const recs = new Recs();
  for (const ts of gatherDepDoneCommon(ws, ev)) {
    ws.log.add4(ts.key, "missing-dep", ev.stimulusId, ws.stimulusTime);
    recs.set(ts, "fetch");
  }
  forgetWorker(ws, ev.worker, recs);
  return recs;
}

/** Drop a peer from data_needed and has_what; tasks it alone held go missing. */
function forgetWorker(ws: WorkerState, worker: string, recs: Recs): void {
  const needed = ws.dataNeeded.get(worker);
  if (needed !== undefined) {
    ws.dataNeeded.delete(worker);
    for (const ts of needed) {
      if (ws.validate) {
        assert(ts.state === "fetch");
        assert(ts.whoHas.has(worker));
      }
      // May override a recommendation made by the caller.
      if (ts.whoHas.size === 1 && ts.whoHas.has(worker)) recs.set(ts, "missing");
    }
  }
  const keys = ws.hasWhat.get(worker);
  if (keys !== undefined) {
    ws.hasWhat.delete(worker);
    for (const key of keys) {
      // who_has.remove(worker): a KeyError when it is not there.
      const ts = ws.task(key);
      if (!ts.whoHas.has(worker)) throw new KeyError(worker);
      ts.whoHas = withoutHolder(ts.whoHas, worker);
    }
  }
}

/** The transfer failed otherwise (e.g. the data failed to deserialise). */
function handleGatherDepFailure(ws: WorkerState, ev: GatherDepFailureEvent): Recs | null {
  const recs = new Recs();
  for (const ts of gatherDepDoneCommon(ws, ev)) {
    recs.set(ts, [
      "error",
      ev.exception,
      ev.traceback,
      ev.exceptionText,
      ev.tracebackText,
      ts.runId,
    ]);
  }
  return recs;
}

function handleRemoveWorker(ws: WorkerState, ev: RemoveWorkerEvent): Recs | null {
  const recs = new Recs();
  forgetWorker(ws, ev.worker, recs);
  return recs;
}

function handleSecede(ws: WorkerState, ev: SecedeEvent): Recs | null {
  const ts = ws.tasks.get(ev.key);
  if (ts === undefined) return null;
  return Recs.of(ts, ["long-running", ev.computeDuration]);
}

/**
 * The scheduler wants to run this task elsewhere. A task may be released between the
 * steal request and its arrival; the scheduler reads a null state as a task this
 * worker does not know, and places it again (Dask's `_WORKER_STATE_UNDEFINED`: its
 * comment here says "already-computing", which its scheduler no longer does).
 */
function handleStealRequest(
  ws: WorkerState,
  ev: StealRequestEvent,
  out: Instruction[],
): Recs | null {
  const ts = ws.tasks.get(ev.key);
  const state = ts !== undefined ? ts.state : null;
  out.push(new StealResponseMsg(ev.key, state, ev.stimulusId));
  // A constrained task holds no resources yet: those are taken on executing.
  if (state === "ready" || state === "constrained" || state === "waiting") {
    return Recs.of(ts as TaskState, "released");
  }
  return null;
}

function handleRetryBusyWorker(ws: WorkerState, ev: RetryBusyWorkerEvent): Recs | null {
  ws.busyWorkers.delete(ev.worker);
  return null;
}

/** Cancel a task on a best-effort basis: only while it waits or is ready. */
function handleCancelCompute(ws: WorkerState, ev: CancelComputeEvent): Recs | null {
  const ts = ws.tasks.get(ev.key);
  if (
    ts === undefined ||
    !(ts.state === "ready" || ts.state === "constrained" || ts.state === "waiting")
  ) {
    return null;
  }
  ws.log.add4(ev.key, "cancel-compute", ev.stimulusId, ws.stimulusTime);
  // Its dependents can't be processing on the scheduler, so they were never sent here.
  assert(
    ts.dependents.size === 0,
    () =>
      `cancel-compute of ${JSON.stringify(ev.key)}, which tasks here depend on: ${JSON.stringify([...ts.dependents].map((d) => d.key))}`,
  );
  return Recs.of(ts, "released");
}

/**
 * Shared by the handlers of all Execute completions. The task may be executing,
 * cancelled or resumed; after a scatter, in memory or error too.
 */
function executeDoneCommon(ws: WorkerState, ev: ExecuteDoneEvent): TaskState {
  // The key must still be in tasks: see the released -> forgotten transition.
  const ts = ws.tasks.get(ev.key);
  assert(
    ts,
    () => `${ev.cls} for ${JSON.stringify(ev.key)}, a task this worker does not hold (forgotten?)`,
  );
  if (ws.validate) {
    assert(
      ws.executing.has(ts) !== ws.longRunning.has(ts),
      () => `${ev.cls} for ${JSON.stringify(ev.key)}, which is not running here (${ts.state})`,
    );
  }
  ts.done = true;
  ws.executedCount += 1;
  ws.releaseResources(ts);
  ws.executing.delete(ts);
  ws.longRunning.delete(ts);
  return ts;
}

/** The freed thread's next task, then the finished task's own recommendation. */
function afterExecute(ws: WorkerState, ts: TaskState, finish: Finish): Recs {
  const recs = ws.ensureComputing();
  if (recs === null) return Recs.of(ts, finish);
  assert(!recs.has(ts));
  return recs.set(ts, finish);
}

function handleExecuteSuccess(ws: WorkerState, ev: ExecuteSuccessEvent): Recs | null {
  const ts = executeDoneCommon(ws, ev);
  // For the scheduler's occupancy estimates: without thread-pool or event-loop overhead.
  ts.addStartStop({ action: "compute", start: ev.start, stop: ev.stop });
  ts.nbytes = ev.nbytes;
  ts.type = ev.type;
  return afterExecute(ws, ts, ["memory", ev.value, ev.runId]);
}

function handleExecuteFailure(ws: WorkerState, ev: ExecuteFailureEvent): Recs | null {
  const ts = executeDoneCommon(ws, ev);
  if (ev.start !== null && ev.stop !== null) {
    ts.addStartStop({ action: "compute", start: ev.start, stop: ev.stop });
  }
  return afterExecute(ws, ts, [
    "error",
    ev.exception,
    ev.traceback,
    ev.exceptionText,
    ev.tracebackText,
    ev.runId,
  ]);
}

/** The task raised Reschedule (not work stealing, which sends free-keys). */
function handleReschedule(ws: WorkerState, ev: RescheduleEvent): Recs | null {
  const ts = executeDoneCommon(ws, ev);
  return afterExecute(ws, ts, "rescheduled");
}

function handleFindMissing(ws: WorkerState, ev: FindMissingEvent, out: Instruction[]): Recs | null {
  if (ws.missingDepFlight.size === 0) return null;
  if (ws.validate) {
    for (const ts of ws.missingDepFlight)
      assert(ts.whoHas.size === 0, () => JSON.stringify(ws.story(ts)));
  }
  const keys: string[] = [];
  for (const ts of ws.missingDepFlight) keys.push(ts.key);
  out.push(new RequestRefreshWhoHasMsg(keys, ev.stimulusId));
  return null;
}

function handleRefreshWhoHas(ws: WorkerState, ev: RefreshWhoHasEvent): Recs | null {
  ws.updateWhoHas(ev.whoHas);
  const recs = new Recs();
  for (const key of ev.whoHas.keys()) {
    const ts = ws.tasks.get(key);
    if (ts === undefined) continue;
    if (ts.whoHas.size > 0 && ts.state === "missing") recs.set(ts, "fetch");
    else if (ts.whoHas.size === 0 && ts.state === "fetch") recs.set(ts, "missing");
    // New replicas of a task in fetch whose known holders are all busy or in flight:
    // _transitions calls _ensure_communicating even without recommendations.
  }
  return recs;
}

/**
 * The seed's asserts on `who_has` and `nbytes` (validation only): the same keys, at
 * least one holder each and, for compute-task, no holder named twice.
 */
function checkHolders(
  whoHas: ReadonlyMap<string, readonly string[]>,
  nbytes: ReadonlyMap<string, unknown>,
  distinct: boolean,
): void {
  assert(
    sameKeys(whoHas, nbytes),
    () =>
      `who_has and nbytes name different keys: ${JSON.stringify([...whoHas.keys()])} and ${JSON.stringify([...nbytes.keys()])}`,
  );
  for (const [key, workers] of whoHas) {
    assert(workers.length > 0, () => `who_has names no holder of ${JSON.stringify(key)}`);
    if (distinct) {
      assert(
        workers.length === new Set(workers).size,
        () => `who_has names a holder of ${JSON.stringify(key)} twice: ${JSON.stringify(workers)}`,
      );
    }
  }
}

function sameKeys(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a.keys()) if (!b.has(k)) return false;
  return true;
}

/** `priority + (generation,)`, as an exactly sized array. */
function withGeneration(p: readonly number[], generation: number): number[] {
  switch (p.length) {
    case 0:
      return [generation];
    case 1:
      return [p[0], generation];
    case 2:
      return [p[0], p[1], generation];
    case 3:
      return [p[0], p[1], p[2], generation];
    default: {
      const out = p.slice();
      out.push(generation);
      return out;
    }
  }
}
