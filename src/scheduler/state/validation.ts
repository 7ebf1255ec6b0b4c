/**
 * Invariants of the scheduler state machine (Dask's `validate_task_state`,
 * `validate_<state>` and `validate_state`), plus the bookkeeping weft adds
 * (occupancy, resources, queuing slots, steals).
 */

import { AssertionError } from "../../util/pyErrors.ts";
import { DATASET_CLIENT_PREFIX } from "./clientInfo.ts";
import { unreachable } from "./events.ts";
import { mayBeQueued, mayRunOn, taskSlotsAvailable } from "./placement.ts";
import type { Replication } from "./replicate.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskGroup } from "./taskGroup.ts";
import { IN_PLAY, type TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Throw `AssertionError` with the message `message()`. The checks below are
 * written `if (!cond) fail(() => …)` so that no message or closure is built
 * unless a check fails: `validateState()` may run after every stimulus.
 */
function fail(message: () => string): never {
  throw new AssertionError(message());
}

/** Tolerance for sums of floating-point durations. */
const EPSILON = 1e-6;

function str(ts: TaskState): string {
  return ts.toString();
}

function assertReady(s: SchedulerState, ts: TaskState): void {
  if (ts.waitingOn.size !== 0) fail(() => `${str(ts)} is waiting on dependencies`);
  if (ts.whoHas.size !== 0) fail(() => `${str(ts)} is in memory`);
  if (ts.exceptionBlame !== null) fail(() => `${str(ts)} has an exception to blame`);
  if (ts.hasLostDependencies) fail(() => `${str(ts)} has lost dependencies`);
  for (const dts of ts.dependencies) {
    if (!(dts.whoHas.size > 0))
      fail(() => `${str(ts)} is ready but dependency ${str(dts)} is not in memory`);
    if (!dts.waiters.has(ts)) fail(() => `${str(ts)} is not among the waiters of ${str(dts)}`);
  }
  if (ts.state !== "queued" && s.queued.has(ts)) fail(() => `${str(ts)} is in the queue`);
  if (ts.state !== "no-worker" && s.unrunnable.has(ts)) fail(() => `${str(ts)} is unrunnable`);
}

/** Check the invariants of one task. Throws `AssertionError` naming the first broken one. */
export function validateTask(s: SchedulerState, ts: TaskState): void {
  if (ts.state === "forgotten") {
    if (s.tasks.get(ts.key) === ts) fail(() => `${str(ts)} is forgotten but still known`);
    return;
  }
  if (s.tasks.get(ts.key) !== ts) fail(() => `${str(ts)} is not the task known by its key`);

  for (const dts of ts.waitingOn) {
    if (!ts.dependencies.has(dts)) fail(() => `${str(ts)} waits on non-dependency ${str(dts)}`);
    if (dts.whoHas.size !== 0) fail(() => `${str(ts)} waits on in-memory ${str(dts)}`);
    if (dts.state === "released") fail(() => `${str(ts)} waits on released ${str(dts)}`);
  }
  for (const dts of ts.waiters) {
    if (!ts.dependents.has(dts)) fail(() => `${str(ts)} has non-dependent waiter ${str(dts)}`);
    if (!IN_PLAY.has(dts.state)) fail(() => `waiter ${str(dts)} of ${str(ts)} is not in play`);
  }
  const inPlay = IN_PLAY.has(ts.state);
  for (const dts of ts.dependencies) {
    if (!dts.dependents.has(ts)) fail(() => `${str(ts)} not among dependents of ${str(dts)}`);
    if (dts.state === "forgotten") fail(() => `${str(ts)} depends on forgotten ${str(dts)}`);
    if (inPlay) {
      if (!(ts.waitingOn.has(dts) || dts.whoHas.size > 0))
        fail(() => `${str(ts)} neither waits on nor has dependency ${str(dts)}`);
    }
  }
  for (const dts of ts.dependents) {
    if (!dts.dependencies.has(ts)) fail(() => `${str(ts)} not among dependencies of ${str(dts)}`);
    if (dts.state === "forgotten") fail(() => `${str(ts)} has forgotten dependent ${str(dts)}`);
  }
  if (!((ts.processingOn !== null) === (ts.state === "processing")))
    fail(() => `${str(ts)}: processingOn is ${ts.processingOn?.address ?? null}`);
  if (!(ts.whoHas.size > 0 === (ts.state === "memory")))
    fail(() => `${str(ts)}: held by ${ts.whoHas.size} workers`);
  if ((ts.state === "memory" || ts.state === "erred") && !ts.everDone)
    fail(() => `${str(ts)} is not counted in tasksDone`);
  if (ts.doneErred && !ts.everDone) fail(() => `${str(ts)} done erring but not done`);
  for (const ws of ts.whoHas) {
    if (!ws.hasWhat.has(ts)) fail(() => `${str(ts)} not in has-what of ${ws.address}`);
    if (s.workers.get(ws.address) !== ws) fail(() => `${str(ts)} held by removed ${ws.address}`);
  }
  for (const cs of ts.whoWants) {
    if (!cs.wantsWhat.has(ts)) fail(() => `${str(ts)} not in wants-what of client ${cs.id}`);
    if (s.clients.get(cs.id) !== cs) fail(() => `${str(ts)} wanted by unknown client ${cs.id}`);
  }
  if (ts.whoHas.size > 0) {
    if (!(ts.waiters.size > 0 || ts.whoWants.size > 0))
      fail(() => `${str(ts)} is in memory but neither wanted nor waited for`);
  }
  if (ts.actor) {
    // Dask's check: the object lives on exactly one holder, the worker that
    // ran it; any other holder has a handle to it, fetched as an input.
    if (ts.state === "memory") {
      let living = 0;
      for (const ws of ts.whoHas) if (ws.actors.has(ts)) living++;
      if (living !== 1) fail(() => `actor ${str(ts)} lives on ${living} of its holders`);
    } else if (ts.state === "processing" && ts.processingOn?.actors.has(ts) !== true) {
      fail(() => `actor ${str(ts)} not among the actors of ${ts.processingOn?.address}`);
    }
  }
  // Set with a recommendation to err, acted on within the stimulus: any other
  // task keeping one would be erred by a new dependent for an error long gone.
  if (ts.exceptionBlame !== null && ts.state !== "erred")
    fail(() => `${str(ts)} has an exception to blame but is not erred`);
  if (!(s.queued.has(ts) === (ts.state === "queued"))) fail(() => `${str(ts)}: queue membership`);
  if (!(s.unrunnable.has(ts) === (ts.state === "no-worker"))) fail(() => `${str(ts)}: unrunnable`);
  const steal = s.steals.get(ts);
  if (steal !== undefined) {
    if (!(ts.processingOn === steal.victim))
      fail(() => `${str(ts)} stolen from a worker not running it`);
  }

  // Stuck or leaked: nothing would move such a task any more.
  if (ts.state === "released" || ts.state === "erred") {
    if (ts.whoWants.size === 0 && ts.dependents.size === 0)
      fail(() => `${str(ts)} is needed by nothing but not forgotten`);
  }
  switch (ts.state) {
    case "released":
      if (ts.whoWants.size > 0 && ts.runSpec !== null)
        fail(() => `released ${str(ts)} is wanted but not computed`);
      if (ts.waiters.size !== 0) fail(() => `released ${str(ts)} has waiters`);
      if (ts.waitingOn.size !== 0) fail(() => `released ${str(ts)} waits on dependencies`);
      for (const dts of ts.dependencies) {
        if (dts.waiters.has(ts)) fail(() => `released ${str(ts)} is a waiter of ${str(dts)}`);
      }
      return;
    case "waiting":
      if (!(ts.waitingOn.size > 0)) fail(() => `waiting ${str(ts)} waits on nothing`);
      for (const dts of ts.waitingOn) {
        if (!IN_PLAY.has(dts.state)) fail(() => `waiting ${str(ts)} waits on ${str(dts)}`);
      }
      for (const dts of ts.dependencies) {
        if (!(dts.whoHas.size > 0 !== ts.waitingOn.has(dts)))
          fail(() => `waiting ${str(ts)}: waits on ${str(dts)} iff it is not in memory`);
        if (!dts.waiters.has(ts)) fail(() => `waiting ${str(ts)} is not a waiter of ${str(dts)}`);
      }
      return;
    case "queued":
      // Dask's checks: ready (waits on nothing, every dependency held, not in
      // memory, not processing: above) and unrestricted. Whether it is still
      // root-ish is not checked: that changes as its group and the cluster do.
      assertReady(s, ts);
      if (!mayBeQueued(ts)) fail(() => `queued ${str(ts)} is restricted or an actor`);
      return;
    case "no-worker":
      assertReady(s, ts);
      for (const ws of s.running) {
        if (mayRunOn(ws, ts))
          fail(() => `${str(ts)} is in no-worker, but ${ws.address} may run it`);
      }
      return;
    case "processing": {
      assertReady(s, ts);
      const ws = ts.processingOn as WorkerInfo;
      if (!ws.processing.has(ts)) fail(() => `${str(ts)} not in processing of ${ws.address}`);
      if (!(s.workers.get(ws.address) === ws))
        fail(() => `${str(ts)} processing on removed worker`);
      return;
    }
    case "memory":
      if (ts.waitingOn.size !== 0) fail(() => `${str(ts)} in memory waits on dependencies`);
      if (!(ts.typename !== null || ts.runSpec === null)) fail(() => `${str(ts)} has no type name`);
      for (const dts of ts.dependents) {
        if (!(ts.waiters.has(dts) === IN_PLAY.has(dts.state)))
          fail(() => `${str(ts)} in memory: dependent ${str(dts)} is a waiter iff in play`);
        if (dts.waitingOn.has(ts)) fail(() => `${str(dts)} waits on in-memory ${str(ts)}`);
      }
      return;
    case "erred":
      if (ts.exceptionBlame === null) fail(() => `erred ${str(ts)} has nothing to blame`);
      if (ts.waiters.size !== 0) fail(() => `erred ${str(ts)} has waiters`);
      return;
    default:
      unreachable(ts.state, "task state");
  }
}

/** A pending `replicate`: its client is connected, and each copy it waits for can still come. */
function validateReplication(s: SchedulerState, r: Replication): void {
  if (r.kind === "replicate" && s.clients.get(r.client.id) !== r.client)
    fail(() => `replicate of a gone client ${r.client.id}`);
  if (r.pending.size === 0) fail(() => `replicate ${r.stimulusId} has nothing pending`);
  for (const [ts, targets] of r.pending) {
    if (s.tasks.get(ts.key) !== ts || ts.state !== "memory") {
      fail(() => `replicate ${r.stimulusId} waits for ${str(ts)}, not in memory`);
    }
    if (targets.size === 0)
      fail(() => `replicate ${r.stimulusId} waits on no worker for ${str(ts)}`);
    for (const ws of targets) {
      if (s.workers.get(ws.address) !== ws) {
        fail(
          () => `replicate ${r.stimulusId} waits for a copy of ${str(ts)} on removed ${ws.address}`,
        );
      }
      if (ts.whoHas.has(ws)) {
        fail(() => `replicate ${r.stimulusId} waits for a copy of ${str(ts)} ${ws.address} holds`);
      }
    }
  }
  if (r.kind === "replicate" && r.moves.size > 0) {
    fail(() => `replicate ${r.stimulusId} has moves`);
  }
  if (r.kind === "rebalance") {
    for (const [ts, targets] of r.pending) {
      for (const ws of targets) {
        if (r.moves.get(ts)?.has(ws) !== true) {
          fail(
            () =>
              `rebalance ${r.stimulusId} waits for a copy of ${str(ts)} on ${ws.address}, no move's`,
          );
        }
      }
    }
  }
}

function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= EPSILON * Math.max(1, Math.abs(a), Math.abs(b));
}

function validateWorker(s: SchedulerState, ws: WorkerInfo): void {
  if (ws.status === "closed") fail(() => `${ws.address} is closed but still connected`);
  if (!(s.running.has(ws) === (ws.status === "running")))
    fail(() => `${ws.address}: running-set membership vs status ${ws.status}`);
  let occupancy = 0;
  const used: Record<string, number> = Object.create(null);
  for (const ts of ws.processing.keys()) {
    if (ts.state !== "processing") fail(() => `${ws.address} processing ${str(ts)}`);
    if (ts.processingOn !== ws) fail(() => `${ws.address} processing ${str(ts)} of another`);
    // Each task at its function's current expected duration (see occupancy.ts).
    if (!ws.longRunning.has(ts)) occupancy += s.taskDuration(ts);
    if (!mayRunOn(ws, ts)) fail(() => `${ws.address} may not run ${str(ts)} (its restrictions)`);
    const r = ts.resourceRestrictions;
    if (r !== null) for (const name in r) used[name] = (used[name] ?? 0) + r[name];
  }
  // The kept sum, while it is valid: a stale one is summed afresh from the counts
  // (checked by validateCountsByFn) at the next read, which validation must not
  // be, lest a validated run round differently from one that is not.
  if (ws.occupancyEpoch === s.durations.epoch && !near(occupancy, ws.occupancySum))
    fail(() => `${ws.address}: occupancy ${ws.occupancySum} ≠ ${occupancy}`);
  for (const name of new Set([...Object.keys(used), ...Object.keys(ws.usedResources)])) {
    if (!near(used[name] ?? 0, ws.usedResources[name] ?? 0))
      fail(() => `${ws.address}: used ${name} ${ws.usedResources[name]} ≠ ${used[name] ?? 0}`);
  }
  for (const ts of ws.longRunning) {
    if (!ws.processing.has(ts)) fail(() => `${ws.address}: long-running ${str(ts)} not processing`);
  }
  let nbytes = 0;
  for (const ts of ws.hasWhat) {
    if (!ts.whoHas.has(ws)) fail(() => `${ws.address} holds ${str(ts)}, which does not know it`);
    if (s.tasks.get(ts.key) !== ts) fail(() => `${ws.address} holds unknown ${str(ts)}`);
    nbytes += s.getNbytes(ts);
  }
  if (nbytes !== ws.nbytes) fail(() => `${ws.address}: nbytes ${ws.nbytes} ≠ ${nbytes}`);
  for (const ts of ws.actors) {
    if (!ts.actor) fail(() => `${ws.address} counts ${str(ts)}, not an actor, among its actors`);
    if (!(ts.processingOn === ws || ts.whoHas.has(ws)))
      fail(() => `${ws.address} counts actor ${str(ts)}, neither processing nor held there`);
  }

  const running = ws.status === "running";
  const executing = ws.processing.size - ws.longRunning.size;
  if (!(s.idle.has(ws) === (running && executing < ws.nthreads))) fail(() => `${ws.address}: idle`);
  const saturation = s.options.workerSaturation;
  const hasSlots = running && Number.isFinite(saturation) && taskSlotsAvailable(ws, saturation) > 0;
  if (!(s.idleTaskCount.has(ws) === hasSlots))
    fail(() => `${ws.address}: free-slot set membership`);
}

/**
 * Check the whole machine: each task with `validateOne`, then every worker,
 * client, and collection against the tasks.
 */
export function validateState(s: SchedulerState, validateOne: (ts: TaskState) => void): void {
  const groupSizes = new Map<TaskGroup, number>();
  const groupCounts = new Map<TaskGroup, { states: Map<string, number>; bytes: number }>();
  let everDone = 0;
  let doneErred = 0;
  for (const [key, ts] of s.tasks) {
    if (ts.key !== key) fail(() => `task ${str(ts)} filed under ${key}`);
    validateOne(ts);
    groupSizes.set(ts.group, (groupSizes.get(ts.group) ?? 0) + 1);
    let counts = groupCounts.get(ts.group);
    if (counts === undefined) groupCounts.set(ts.group, (counts = { states: new Map(), bytes: 0 }));
    counts.states.set(ts.state, (counts.states.get(ts.state) ?? 0) + 1);
    if (ts.state === "memory") counts.bytes += Math.max(0, ts.nbytes);
    if (ts.everDone) everDone++;
    if (ts.doneErred) doneErred++;
  }
  for (const ts of s.replicatedTasks) {
    if (s.tasks.get(ts.key) !== ts || ts.whoHas.size < 2) {
      fail(() => `${str(ts)} indexed as replicated, held by ${ts.whoHas.size}`);
    }
  }
  for (const ts of s.tasks.values()) {
    if (ts.whoHas.size > 1 && !s.replicatedTasks.has(ts)) {
      fail(() => `${str(ts)} held by ${ts.whoHas.size} is not indexed as replicated`);
    }
    if ((ts.replicasWanted > 0 || ts.replicasWantedOn !== null) && ts.state !== "memory") {
      fail(() => `${str(ts)} is ${ts.state} with ${ts.replicasWanted} replicas wanted`);
    }
  }
  // Forgotten tasks stay counted: the known ones can only be fewer.
  if (everDone > s.tasksDone) fail(() => `tasksDone ${s.tasksDone} < ${everDone} tasks done`);
  if (doneErred > s.tasksDoneErred || s.tasksDoneErred > s.tasksDone) {
    fail(
      () =>
        `tasksDoneErred ${s.tasksDoneErred}: fewer than the ${doneErred} tasks done erring, or more than tasksDone ${s.tasksDone}`,
    );
  }
  for (const [name, tg] of s.taskGroups) {
    if (tg.name !== name) fail(() => `task group ${tg.name} filed under ${name}`);
    const n = groupSizes.get(tg) ?? 0;
    if (tg.size !== n) fail(() => `task group ${name} has size ${tg.size}, ${n} tasks`);
    const counted = groupCounts.get(tg);
    for (const [state, kept] of Object.entries(tg.states)) {
      if (state === "forgotten") continue;
      const n = counted?.states.get(state) ?? 0;
      if (kept !== n) fail(() => `task group ${name} counts ${kept} tasks ${state}, has ${n}`);
    }
    const bytes = counted?.bytes ?? 0;
    if (tg.memoryBytes !== bytes) {
      fail(() => `task group ${name} counts ${tg.memoryBytes} bytes in memory, has ${bytes}`);
    }
  }
  for (const tg of groupSizes.keys()) {
    if (s.taskGroups.get(tg.name) !== tg) fail(() => `task group ${tg.name} is not filed`);
  }
  let nthreads = 0;
  const names = new Map<string, WorkerInfo>();
  for (const [address, ws] of s.workers) {
    if (ws.address !== address) fail(() => `worker ${ws.address} filed under ${address}`);
    validateWorker(s, ws);
    nthreads += ws.nthreads;
    if (ws.name === null) continue;
    const other = names.get(ws.name);
    if (other !== undefined) fail(() => `workers ${other.address} and ${address} share a name`);
    names.set(ws.name, ws);
  }
  if (nthreads !== s.totalNthreads) fail(() => `totalNthreads ${s.totalNthreads} ≠ ${nthreads}`);
  for (const set of [s.running, s.idle, s.idleTaskCount]) {
    for (const ws of set) {
      if (s.workers.get(ws.address) !== ws) fail(() => `removed worker ${ws.address} in a set`);
    }
  }
  validateCountsByFn(s);
  for (const r of s.replications) validateReplication(s, r);
  // The index of pending copies by task holds exactly what the requests wait for.
  let indexed = 0;
  for (const [ts, waiting] of s.replicationsByTask) {
    if (waiting.size === 0) fail(() => `replicationsByTask holds no request for ${str(ts)}`);
    for (const r of waiting) {
      indexed++;
      if (!s.replications.has(r) || !r.pending.has(ts)) {
        fail(() => `replicationsByTask: ${r.stimulusId} does not wait for ${str(ts)}`);
      }
    }
  }
  let pendingCount = 0;
  for (const r of s.replications) pendingCount += r.pending.size;
  if (indexed !== pendingCount) {
    fail(() => `replicationsByTask indexes ${indexed} pending copies of ${pendingCount}`);
  }
  const retiring = new Set<WorkerInfo>();
  for (const r of s.retirements) {
    if (r.workers.size === 0) fail(() => `retirement ${r.stimulusId} retires nothing`);
    for (const ws of r.workers) {
      if (s.workers.get(ws.address) !== ws) fail(() => `retiring ${ws.address} was removed`);
      if (s.running.has(ws)) fail(() => `retiring ${ws.address} gets tasks`);
      if (retiring.has(ws)) fail(() => `${ws.address} is retired twice`);
      retiring.add(ws);
    }
  }
  for (const [name, ds] of s.datasets) {
    const holder = ds.holder;
    if (s.clients.get(holder.id) !== holder || !holder.standIn) {
      fail(() => `dataset ${name} held by unknown client ${holder.id}`);
    }
    const keys = new Set(ds.keys);
    for (const ts of holder.wantsWhat) {
      if (!keys.has(ts.key)) fail(() => `dataset ${name} holds ${str(ts)}, not among its keys`);
    }
  }
  for (const [id, cs] of s.clients) {
    if (cs.id !== id) fail(() => `client ${cs.id} filed under ${id}`);
    if (id.startsWith(DATASET_CLIENT_PREFIX)) {
      const ds = s.datasets.get(id.slice(DATASET_CLIENT_PREFIX.length));
      if (ds?.holder !== cs) fail(() => `client ${id} holds no dataset`);
    }
    for (const ts of cs.wantsWhat) {
      if (!ts.whoWants.has(cs)) fail(() => `client ${id} wants ${str(ts)}, which does not know it`);
      if (s.tasks.get(ts.key) !== ts) fail(() => `client ${id} wants unknown ${str(ts)}`);
    }
  }
  for (const ts of s.queued) {
    if (ts.state !== "queued") fail(() => `${str(ts)} in the queue`);
  }
  for (const ts of s.unrunnable.keys()) {
    if (ts.state !== "no-worker") fail(() => `${str(ts)} unrunnable`);
  }
  for (const [ts, steal] of s.steals) {
    if (ts.state !== "processing") fail(() => `steal of ${str(ts)}`);
    if (s.workers.get(steal.victim.address) !== steal.victim) fail(() => `steal from removed`);
  }
  validateWorkStealing(s);
  const queuing = Number.isFinite(s.options.workerSaturation);
  if (queuing && s.queued.size > 0) {
    if (s.idleTaskCount.size !== 0) fail(() => "tasks are queued while a worker has free slots");
  }
}

/**
 * The counts by function that a worker's occupancy sums over (see
 * occupancy.ts): exactly its processing tasks that have not seceded, no entry
 * at zero.
 */
function validateCountsByFn(s: SchedulerState): void {
  for (const ws of s.workers.values()) {
    const actual = new Map<string, number>();
    let unnamed = 0;
    for (const ts of ws.processing.keys()) {
      if (ws.longRunning.has(ts)) continue;
      const fn = ts.runSpec?.fn;
      if (fn === undefined) unnamed++;
      else actual.set(fn, (actual.get(fn) ?? 0) + 1);
    }
    if (ws.unnamedCount !== unnamed)
      fail(
        () => `${ws.address}: counts ${ws.unnamedCount} tasks without a function, not ${unnamed}`,
      );
    for (const [fn, n] of ws.countsByFn) {
      const m = actual.get(fn) ?? 0;
      if (n !== m) fail(() => `${ws.address}: countsByFn counts ${n} tasks of ${fn}, not ${m}`);
    }
    for (const [fn, m] of actual) {
      if (ws.countsByFn.get(fn) !== m)
        fail(() => `${ws.address}: countsByFn misses its ${m} tasks of ${fn}`);
    }
  }
}

/**
 * The work-stealing bookkeeping: every stealable task is processing on the
 * worker it is kept under, at its level, and not being stolen; the in-flight
 * totals are those of the steals in flight (for the workers still connected).
 */
function validateWorkStealing(s: SchedulerState): void {
  const tracking = s.workStealing;
  for (const [ts, level] of tracking.keyStealable) {
    const ws = ts.processingOn;
    if (ts.state !== "processing" || ws === null) fail(() => `stealable ${str(ts)}`);
    else if (tracking.stealable.get(ws)?.[level].has(ts) !== true)
      fail(() => `stealable ${str(ts)} not kept under ${ws.address} at level ${level}`);
    if (s.steals.has(ts)) fail(() => `${str(ts)} stealable while being stolen`);
  }
  for (const [fn, guessed] of tracking.unknownDurations) {
    if (guessed.size === 0) fail(() => `no tasks kept to be filed again for ${fn}`);
    for (const ts of guessed) {
      if (ts.state !== "processing" || ts.runSpec?.fn !== fn)
        fail(() => `${str(ts)} kept to be filed again on the duration of ${fn}`);
    }
  }
  for (const [ws, levels] of tracking.stealable) {
    if (s.workers.get(ws.address) !== ws)
      fail(() => `stealable tasks kept for removed ${ws.address}`);
    for (const set of levels) {
      for (const ts of set) {
        if (!tracking.keyStealable.has(ts)) fail(() => `${str(ts)} kept stealable without a level`);
      }
    }
  }
  const tasks = new Map<WorkerInfo, number>();
  const seconds = new Map<WorkerInfo, number>();
  const add = (ws: WorkerInfo, n: number, secs: number): void => {
    if (!tracking.inFlightTasks.has(ws)) return;
    tasks.set(ws, (tasks.get(ws) ?? 0) + n);
    seconds.set(ws, (seconds.get(ws) ?? 0) + secs);
  };
  for (const steal of s.steals.values()) {
    add(steal.victim, -1, -steal.victimDuration);
    add(steal.thief, 1, steal.thiefDuration);
  }
  for (const [ws, n] of tracking.inFlightTasks) {
    if (n !== (tasks.get(ws) ?? 0))
      fail(() => `${ws.address}: ${n} tasks in flight ≠ ${tasks.get(ws) ?? 0}`);
    const secs = tracking.inFlightOccupancy.get(ws) ?? 0;
    if (!near(secs, seconds.get(ws) ?? 0))
      fail(() => `${ws.address}: in-flight occupancy ${secs} ≠ ${seconds.get(ws) ?? 0}`);
  }
}
