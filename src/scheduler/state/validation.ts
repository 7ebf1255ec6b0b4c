/**
 * Invariants of the scheduler state machine (Dask's `validate_task_state`,
 * `validate_<state>` and `validate_state`), plus the bookkeeping weft adds
 * (occupancy, resources, queuing slots, steals).
 */

import { assert } from "../../util/pyErrors.ts";
import { unreachable } from "./events.ts";
import { isQueueable, taskSlotsAvailable } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { IN_PLAY, SCHEDULER_TASK_STATES, type TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** Tolerance for sums of floating-point durations. */
const EPSILON = 1e-6;

function str(ts: TaskState): string {
  return ts.toString();
}

function assertReady(s: SchedulerState, ts: TaskState): void {
  assert(ts.waitingOn.size === 0, () => `${str(ts)} is waiting on dependencies`);
  assert(ts.whoHas.size === 0, () => `${str(ts)} is in memory`);
  assert(ts.exceptionBlame === null, () => `${str(ts)} has an exception to blame`);
  assert(!ts.hasLostDependencies, () => `${str(ts)} has lost dependencies`);
  for (const dts of ts.dependencies) {
    assert(
      dts.whoHas.size > 0,
      () => `${str(ts)} is ready but dependency ${str(dts)} is not in memory`,
    );
    assert(dts.waiters.has(ts), () => `${str(ts)} is not among the waiters of ${str(dts)}`);
  }
  if (ts.state !== "queued") assert(!s.queued.has(ts), () => `${str(ts)} is in the queue`);
  if (ts.state !== "no-worker") assert(!s.unrunnable.has(ts), () => `${str(ts)} is unrunnable`);
}

/** Check the invariants of one task. Throws `AssertionError` naming the first broken one. */
export function validateTask(s: SchedulerState, ts: TaskState): void {
  assert(SCHEDULER_TASK_STATES.includes(ts.state), () => `unknown state ${ts.state}`);
  if (ts.state === "forgotten") {
    assert(s.tasks.get(ts.key) !== ts, () => `${str(ts)} is forgotten but still known`);
    return;
  }
  assert(s.tasks.get(ts.key) === ts, () => `${str(ts)} is not the task known by its key`);

  for (const dts of ts.waitingOn) {
    assert(ts.dependencies.has(dts), () => `${str(ts)} waits on non-dependency ${str(dts)}`);
    assert(dts.whoHas.size === 0, () => `${str(ts)} waits on in-memory ${str(dts)}`);
    assert(dts.state !== "released", () => `${str(ts)} waits on released ${str(dts)}`);
  }
  for (const dts of ts.waiters) {
    assert(ts.dependents.has(dts), () => `${str(ts)} has non-dependent waiter ${str(dts)}`);
    assert(IN_PLAY.has(dts.state), () => `waiter ${str(dts)} of ${str(ts)} is not in play`);
  }
  for (const dts of ts.dependencies) {
    assert(dts.dependents.has(ts), () => `${str(ts)} not among dependents of ${str(dts)}`);
    assert(dts.state !== "forgotten", () => `${str(ts)} depends on forgotten ${str(dts)}`);
    if (IN_PLAY.has(ts.state)) {
      assert(
        ts.waitingOn.has(dts) || dts.whoHas.size > 0,
        () => `${str(ts)} neither waits on nor has dependency ${str(dts)}`,
      );
    }
  }
  for (const dts of ts.dependents) {
    assert(dts.dependencies.has(ts), () => `${str(ts)} not among dependencies of ${str(dts)}`);
    assert(dts.state !== "forgotten", () => `${str(ts)} has forgotten dependent ${str(dts)}`);
  }
  assert(
    (ts.processingOn !== null) === (ts.state === "processing"),
    () => `${str(ts)}: processingOn is ${ts.processingOn?.address ?? null}`,
  );
  assert(
    ts.whoHas.size > 0 === (ts.state === "memory"),
    () => `${str(ts)}: held by ${ts.whoHas.size} workers`,
  );
  for (const ws of ts.whoHas) {
    assert(ws.hasWhat.has(ts), () => `${str(ts)} not in has-what of ${ws.address}`);
    assert(s.workers.get(ws.address) === ws, () => `${str(ts)} held by removed ${ws.address}`);
  }
  for (const cs of ts.whoWants) {
    assert(cs.wantsWhat.has(ts), () => `${str(ts)} not in wants-what of client ${cs.id}`);
    assert(s.clients.get(cs.id) === cs, () => `${str(ts)} wanted by unknown client ${cs.id}`);
  }
  if (ts.whoHas.size > 0) {
    assert(
      ts.waiters.size > 0 || ts.whoWants.size > 0,
      () => `${str(ts)} is in memory but neither wanted nor waited for`,
    );
  }
  assert(s.queued.has(ts) === (ts.state === "queued"), () => `${str(ts)}: queue membership`);
  assert(s.unrunnable.has(ts) === (ts.state === "no-worker"), () => `${str(ts)}: unrunnable`);
  const steal = s.steals.get(ts);
  if (steal !== undefined) {
    assert(
      ts.processingOn === steal.victim,
      () => `${str(ts)} stolen from a worker not running it`,
    );
  }

  switch (ts.state) {
    case "released":
      assert(ts.waiters.size === 0, () => `released ${str(ts)} has waiters`);
      assert(ts.waitingOn.size === 0, () => `released ${str(ts)} waits on dependencies`);
      for (const dts of ts.dependencies) {
        assert(!dts.waiters.has(ts), () => `released ${str(ts)} is a waiter of ${str(dts)}`);
      }
      return;
    case "waiting":
      assert(ts.waitingOn.size > 0, () => `waiting ${str(ts)} waits on nothing`);
      for (const dts of ts.dependencies) {
        assert(
          dts.whoHas.size > 0 !== ts.waitingOn.has(dts),
          () => `waiting ${str(ts)}: waits on ${str(dts)} iff it is not in memory`,
        );
        assert(dts.waiters.has(ts), () => `waiting ${str(ts)} is not a waiter of ${str(dts)}`);
      }
      return;
    case "queued":
      assertReady(s, ts);
      assert(isQueueable(ts), () => `queued ${str(ts)} is not queueable`);
      return;
    case "no-worker":
      assertReady(s, ts);
      return;
    case "processing": {
      assertReady(s, ts);
      const ws = ts.processingOn as WorkerInfo;
      assert(ws.processing.has(ts), () => `${str(ts)} not in processing of ${ws.address}`);
      assert(s.workers.get(ws.address) === ws, () => `${str(ts)} processing on removed worker`);
      return;
    }
    case "memory":
      assert(ts.waitingOn.size === 0, () => `${str(ts)} in memory waits on dependencies`);
      assert(ts.typename !== null || ts.runSpec === null, () => `${str(ts)} has no type name`);
      for (const dts of ts.dependents) {
        assert(
          ts.waiters.has(dts) === IN_PLAY.has(dts.state),
          () => `${str(ts)} in memory: dependent ${str(dts)} is a waiter iff in play`,
        );
        assert(!dts.waitingOn.has(ts), () => `${str(dts)} waits on in-memory ${str(ts)}`);
      }
      return;
    case "erred":
      assert(ts.exceptionBlame !== null, () => `erred ${str(ts)} has nothing to blame`);
      assert(ts.waiters.size === 0, () => `erred ${str(ts)} has waiters`);
      return;
    default:
      unreachable(ts.state, "task state");
  }
}

function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= EPSILON * Math.max(1, Math.abs(a), Math.abs(b));
}

function validateWorker(s: SchedulerState, ws: WorkerInfo): void {
  assert(ws.status !== "closed", () => `${ws.address} is closed but still connected`);
  assert(
    s.running.has(ws) === (ws.status === "running"),
    () => `${ws.address}: running-set membership vs status ${ws.status}`,
  );
  let occupancy = 0;
  const used: Record<string, number> = {};
  for (const [ts, duration] of ws.processing) {
    assert(ts.state === "processing", () => `${ws.address} processing ${str(ts)}`);
    assert(ts.processingOn === ws, () => `${ws.address} processing ${str(ts)} of another`);
    occupancy += duration;
    const r = ts.resourceRestrictions;
    if (r !== null) for (const name in r) used[name] = (used[name] ?? 0) + r[name];
  }
  assert(
    near(occupancy, ws.occupancy),
    () => `${ws.address}: occupancy ${ws.occupancy} ≠ ${occupancy}`,
  );
  for (const name of new Set([...Object.keys(used), ...Object.keys(ws.usedResources)])) {
    assert(
      near(used[name] ?? 0, ws.usedResources[name] ?? 0),
      () => `${ws.address}: used ${name} ${ws.usedResources[name]} ≠ ${used[name] ?? 0}`,
    );
  }
  for (const ts of ws.longRunning) {
    assert(ws.processing.has(ts), () => `${ws.address}: long-running ${str(ts)} not processing`);
  }
  let nbytes = 0;
  for (const ts of ws.hasWhat) {
    assert(ts.whoHas.has(ws), () => `${ws.address} holds ${str(ts)}, which does not know it`);
    assert(s.tasks.get(ts.key) === ts, () => `${ws.address} holds unknown ${str(ts)}`);
    nbytes += s.getNbytes(ts);
  }
  assert(nbytes === ws.nbytes, () => `${ws.address}: nbytes ${ws.nbytes} ≠ ${nbytes}`);

  const running = ws.status === "running";
  const executing = ws.processing.size - ws.longRunning.size;
  assert(s.idle.has(ws) === (running && executing < ws.nthreads), () => `${ws.address}: idle`);
  const saturation = s.options.workerSaturation;
  const hasSlots = running && Number.isFinite(saturation) && taskSlotsAvailable(ws, saturation) > 0;
  assert(s.idleTaskCount.has(ws) === hasSlots, () => `${ws.address}: free-slot set membership`);
}

/**
 * Check the whole machine: each task with `validateOne`, then every worker,
 * client, and collection against the tasks.
 */
export function validateState(s: SchedulerState, validateOne: (ts: TaskState) => void): void {
  for (const [key, ts] of s.tasks) {
    assert(ts.key === key, () => `task ${str(ts)} filed under ${key}`);
    validateOne(ts);
  }
  let nthreads = 0;
  for (const [address, ws] of s.workers) {
    assert(ws.address === address, () => `worker ${ws.address} filed under ${address}`);
    validateWorker(s, ws);
    nthreads += ws.nthreads;
  }
  assert(nthreads === s.totalNthreads, () => `totalNthreads ${s.totalNthreads} ≠ ${nthreads}`);
  for (const set of [s.running, s.idle, s.idleTaskCount]) {
    for (const ws of set) {
      assert(s.workers.get(ws.address) === ws, () => `removed worker ${ws.address} in a set`);
    }
  }
  for (const [id, cs] of s.clients) {
    assert(cs.id === id, () => `client ${cs.id} filed under ${id}`);
    for (const ts of cs.wantsWhat) {
      assert(ts.whoWants.has(cs), () => `client ${id} wants ${str(ts)}, which does not know it`);
      assert(s.tasks.get(ts.key) === ts, () => `client ${id} wants unknown ${str(ts)}`);
    }
  }
  for (const ts of s.queued.sorted()) {
    assert(ts.state === "queued", () => `${str(ts)} in the queue`);
  }
  for (const ts of s.unrunnable.keys()) {
    assert(ts.state === "no-worker", () => `${str(ts)} unrunnable`);
  }
  for (const [ts, steal] of s.steals) {
    assert(ts.state === "processing", () => `steal of ${str(ts)}`);
    assert(s.workers.get(steal.victim.address) === steal.victim, () => `steal from removed`);
  }
  const queuing = Number.isFinite(s.options.workerSaturation);
  if (queuing && s.queued.size > 0) {
    assert(s.idleTaskCount.size === 0, "tasks are queued while a worker has free slots");
  }
}
