import { AssertionError, assert, setRemove } from "../../util/pyErrors.ts";
import type { ErrorMessage } from "./errorMessage.ts";
import {
  AddKeysMsg,
  Execute,
  type Instruction,
  LongRunningMsg,
  ReleaseWorkerDataMsg,
  RescheduleMsg,
  TaskErredMsg,
} from "./instructions.ts";
import { type Finish, Recs } from "./recs.ts";
import {
  NO_TASKS,
  PROCESSING,
  READY,
  RUN_ID_SENTINEL,
  stateIndex,
  TASK_STATES,
  type TaskState,
  type TaskStateState,
  withoutTask,
} from "./taskState.ts";
import type { WorkerState } from "./workerState.ts";

/**
 * A transition function. `args` is the recommendation itself when it carries
 * arguments (`["memory", value, runId]`: the arguments are `args[1]`, `args[2]`…), or
 * the bare finish state. Instructions go to `out`; the return value is the new
 * recommendations (null for none).
 */
export type TransitionFn = (
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
) => Recs | null;

function one(ts: TaskState, finish: Finish): Recs {
  return Recs.of(ts, finish);
}

function arg<T>(args: Finish, i: number): T {
  return (args as readonly unknown[])[i] as T;
}

// -------------------------------------------------------------- fetch & missing

function transitionGenericFetch(ws: WorkerState, ts: TaskState): Recs | null {
  if (ts.whoHas.size === 0) return one(ts, "missing");
  ts.state = "fetch";
  ts.done = false;
  ws.fetchCount += 1;
  assert(ts.priority !== null && ts.priority.length > 0);
  for (const w of ts.whoHas) ws.dataNeededFor(w).add(ts);
  return null;
}

function transitionMissingWaiting(ws: WorkerState, ts: TaskState): Recs | null {
  ws.missingDepFlight.delete(ts);
  ws.purgeState(ts);
  return transitionReleasedWaiting(ws, ts);
}

function transitionMissingFetch(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) assert(ts.state === "missing");
  if (ts.whoHas.size === 0) return null;
  ws.missingDepFlight.delete(ts);
  return transitionGenericFetch(ws, ts);
}

function transitionMissingReleased(ws: WorkerState, ts: TaskState): Recs | null {
  ws.missingDepFlight.delete(ts);
  const recs = transitionGenericReleased(ws, ts);
  assert(ws.tasks.has(ts.key));
  return recs;
}

function transitionFlightMissing(ws: WorkerState, ts: TaskState): Recs | null {
  assert(ts.done);
  return transitionGenericMissing(ws, ts);
}

function transitionGenericMissing(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) assert(ts.whoHas.size === 0);
  ts.state = "missing";
  ws.missingDepFlight.add(ts);
  ts.done = false;
  return null;
}

function transitionReleasedFetch(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) assert(ts.state === "released");
  return transitionGenericFetch(ws, ts);
}

// ------------------------------------------------------------------- released

function transitionGenericReleased(ws: WorkerState, ts: TaskState): Recs | null {
  ws.purgeState(ts);
  let recs: Recs | null = null;
  for (const dependency of ts.dependencies) {
    const s = dependency.state;
    if (dependency.waiters.size === 0 && !READY.has(s) && !PROCESSING.has(s) && s !== "memory") {
      if (recs === null) recs = new Recs();
      recs.set(dependency, "released");
    }
  }
  ts.state = "released";
  if (ts.dependents.size === 0) {
    if (recs === null) recs = new Recs();
    recs.set(ts, "forgotten");
  }
  return recs;
}

function transitionReleasedWaiting(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) {
    for (const d of ts.dependencies) assert(ws.tasks.has(d.key));
  }
  let recs: Recs | null = null;
  ts.waitingForData = NO_TASKS;
  for (const dep of ts.dependencies) {
    if (dep.state !== "memory") {
      ts.addWaitingFor(dep);
      if (recs === null) recs = new Recs();
      recs.set(dep, "fetch");
    }
  }
  if (ts.waitingForData.size === 0) {
    if (recs === null) recs = new Recs();
    recs.set(ts, "ready");
  }
  ts.state = "waiting";
  ws.waiting.add(ts);
  return recs;
}

function transitionFetchFlight(ws: WorkerState, ts: TaskState, args: Finish): Recs | null {
  const worker = arg<string>(args, 1);
  if (ws.validate) {
    assert(ts.state === "fetch");
    assert(ts.whoHas.size > 0);
    // _ensure_communicating has already removed the task from data_needed.
    for (const w of ts.whoHas) assert(!ws.dataNeededFor(w).has(ts));
  }
  ts.done = false;
  ts.state = "flight";
  ts.comingFrom = worker;
  ws.inFlightTasks.add(ts);
  ws.fetchCount -= 1;
  return null;
}

function transitionFetchMissing(ws: WorkerState, ts: TaskState): Recs | null {
  ws.fetchCount -= 1;
  return transitionGenericMissing(ws, ts);
}

function transitionFetchReleased(ws: WorkerState, ts: TaskState): Recs | null {
  ws.fetchCount -= 1;
  return transitionGenericReleased(ws, ts);
}

function transitionMemoryReleased(
  ws: WorkerState,
  ts: TaskState,
  _args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  assert(ts.nbytes !== null);
  ws.nbytes -= ts.nbytes;
  const recs = transitionGenericReleased(ws, ts);
  out.push(new ReleaseWorkerDataMsg(ts.key, stimulusId));
  return recs;
}

// ------------------------------------------------------------ ready & execute

/** Validation: every input of a task about to run is in memory here. */
function assertInputsInMemory(ws: WorkerState, ts: TaskState): void {
  for (const dep of ts.dependencies) {
    if (!(dep.state === "memory" && (ws.data.has(dep.key) || ws.actors.has(dep.key)))) {
      throw new AssertionError(
        `${JSON.stringify(ts.key)} about to run while its input ${JSON.stringify(dep.key)} is ${dep.state}`,
      );
    }
  }
}

function transitionWaitingConstrained(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) {
    assert(ts.state === "waiting");
    assert(ts.waitingForData.size === 0);
    assertInputsInMemory(ws, ts);
    assert(!ws.ready.has(ts));
    assert(!ws.constrained.has(ts));
  }
  ts.state = "constrained";
  setRemove(ws.waiting, ts);
  ws.constrained.add(ts);
  return ws.ensureComputing();
}

function transitionExecutingRescheduled(
  ws: WorkerState,
  ts: TaskState,
  _args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  // Triggered exclusively by a task raising Reschedule(); not by work stealing.
  assert(ts.done);
  out.push(new RescheduleMsg(ts.key, stimulusId));
  // Not the same as recommending released: (executing, released) would need special
  // code for done=true.
  return transitionGenericReleased(ws, ts);
}

function transitionWaitingReady(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) {
    assert(ts.state === "waiting");
    assert(!ws.ready.has(ts));
    assert(!ws.constrained.has(ts));
    assert(ts.waitingForData.size === 0);
    assertInputsInMemory(ws, ts);
  }
  if (ts.resourceRestrictions.size > 0) return one(ts, "constrained");
  ts.state = "ready";
  assert(ts.priority !== null);
  setRemove(ws.waiting, ts);
  ws.ready.add(ts);
  return ws.ensureComputing();
}

// ----------------------------------------------------------------------- error

function transitionGenericError(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  ts.exception = arg(args, 1);
  ts.traceback = arg(args, 2);
  ts.exceptionText = arg<string>(args, 3);
  ts.tracebackText = arg<string>(args, 4);
  const runId = arg<number>(args, 5);
  ts.state = "error";
  assert(ts.exception, "a task in error state needs its exception");
  out.push(
    new TaskErredMsg(
      ts.key,
      runId,
      ts.exception,
      ts.traceback,
      ts.exceptionText,
      ts.tracebackText,
      ws.threads.get(ts.key) ?? null,
      ts.startstops,
      stimulusId,
    ),
  );
  return null;
}

/** On failure of the previous state, drop the error and start the next state silently. */
function transitionResumedError(ws: WorkerState, ts: TaskState): Recs | null {
  assert(ts.done);
  let recs: Recs;
  if (ts.previous === "executing" || ts.previous === "long-running") {
    assert(ts.next === "fetch");
    recs = one(ts, "fetch");
  } else {
    assert(ts.previous === "flight");
    assert(ts.next === "waiting");
    recs = one(ts, "waiting");
  }
  ts.state = "released";
  ts.done = false;
  ts.previous = null;
  ts.next = null;
  void ws;
  return recs;
}

/** The task rescheduled itself while the scheduler wants it fetched: go fetch it. */
function transitionResumedRescheduled(_ws: WorkerState, ts: TaskState): Recs | null {
  assert(ts.done);
  assert(ts.previous === "executing" || ts.previous === "long-running");
  assert(ts.next === "fetch");
  ts.state = "released";
  ts.done = false;
  ts.previous = null;
  ts.next = null;
  return one(ts, "fetch");
}

// ---------------------------------------------------------- cancelled & resumed

function transitionResumedFetch(ws: WorkerState, ts: TaskState): Recs | null {
  if (ts.previous === "flight") {
    if (ws.validate) assert(ts.next === "waiting");
    if (ts.done) {
      // The gather ended without the key: compute it, as the scheduler asked.
      ts.state = "released";
      ts.done = false;
      ts.previous = null;
      ts.next = null;
      return one(ts, "waiting");
    }
    // Back where we started: forget the whole cancellation.
    ts.state = "flight";
    ts.previous = null;
    ts.next = null;
  } else if (ws.validate) {
    assert(ts.previous === "executing" || ts.previous === "long-running");
    assert(ts.next === "fetch");
    // None of the exit events of execute recommend fetch.
    assert(!ts.done);
  }
  return null;
}

function transitionResumedReleased(_ws: WorkerState, ts: TaskState): Recs | null {
  // None of the exit events of execute or gather_dep recommend released.
  assert(!ts.done);
  ts.state = "cancelled";
  ts.next = null;
  return null;
}

function transitionCancelledFetch(_ws: WorkerState, ts: TaskState): Recs | null {
  if (ts.previous === "flight") {
    // gather_dep completed for a cancelled task: drop the output, maybe forget.
    if (ts.done) return one(ts, "released");
    // Forget the task was cancelled.
    ts.state = "flight";
    ts.previous = null;
    return null;
  }
  assert(ts.previous === "executing" || ts.previous === "long-running");
  assert(!ts.done);
  ts.state = "resumed";
  ts.next = "fetch";
  return null;
}

function transitionCancelledWaiting(
  _ws: WorkerState,
  ts: TaskState,
  _args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  // None of the exit events of gather_dep or execute recommend waiting.
  assert(!ts.done);
  if (ts.previous === "executing") {
    ts.state = "executing";
    ts.previous = null;
    return null;
  }
  if (ts.previous === "long-running") {
    // Tell the scheduler in arrears that the task seceded (twice, if it seceded
    // before it was cancelled).
    ts.state = "long-running";
    ts.previous = null;
    out.push(new LongRunningMsg(ts.key, null, stimulusId));
    return null;
  }
  assert(ts.previous === "flight");
  ts.state = "resumed";
  ts.next = "waiting";
  return null;
}

function transitionCancelledReleased(ws: WorkerState, ts: TaskState): Recs | null {
  // The arguments of transitions to memory or error, if any, are ignored.
  if (!ts.done) return null;
  ts.previous = null;
  ts.done = false;
  return transitionGenericReleased(ws, ts);
}

/** A running task can't be stopped: it is cancelled, and its result dropped when it ends. */
function transitionExecutingReleased(ws: WorkerState, ts: TaskState): Recs | null {
  if (ws.validate) {
    assert(ts.state === "executing" || ts.state === "long-running");
    assert(!ts.next);
    assert(!ts.done);
  }
  ts.previous = ts.state as "executing" | "long-running";
  ts.state = "cancelled";
  return null;
}

function transitionReadyExecuting(
  ws: WorkerState,
  ts: TaskState,
  _args: Finish,
  stimulusId: string,
  out: Instruction[],
  expected: "ready" | "constrained" = "ready",
): Recs | null {
  if (ws.validate) {
    assert(ts.state === expected);
    assert(ts.waitingForData.size === 0);
    assert(!ws.data.has(ts.key));
    assert(!ws.ready.has(ts));
    assert(!ws.constrained.has(ts));
    for (const dep of ts.dependencies) assert(ws.data.has(dep.key) || ws.actors.has(dep.key));
  }
  ts.state = "executing";
  out.push(new Execute(ts.key, stimulusId));
  return null;
}

function transitionConstrainedExecuting(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  return transitionReadyExecuting(ws, ts, args, stimulusId, out, "constrained");
}

function transitionFlightFetch(ws: WorkerState, ts: TaskState): Recs | null {
  // After the gather ended, start over; before, nothing to do.
  if (!ts.done) return null;
  return transitionGenericFetch(ws, ts);
}

function transitionFlightReleased(_ws: WorkerState, ts: TaskState): Recs | null {
  // None of the exit events of gather_dep recommend released.
  assert(!ts.done);
  ts.previous = "flight";
  ts.next = null;
  // See dask/distributed#5046 (discussion_r685093940).
  ts.state = "cancelled";
  return null;
}

function transitionExecutingLongRunning(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  const computeDuration = arg<number>(args, 1);
  ts.state = "long-running";
  ws.executing.delete(ts);
  ws.longRunning.add(ts);
  out.push(new LongRunningMsg(ts.key, computeDuration, stimulusId));
  return ws.ensureComputing();
}

/**
 * cancelled(executing|long-running) or resumed(...->fetch) -> long-running. Unlike
 * executing -> long-running, no LongRunningMsg: for the scheduler this task no longer
 * runs here; the message goes out if and when it goes back to waiting.
 */
function transitionCancelledOrResumedLongRunning(ws: WorkerState, ts: TaskState): Recs | null {
  assert(ts.previous === "executing" || ts.previous === "long-running");
  ts.previous = "long-running";
  ws.executing.delete(ts);
  ws.longRunning.add(ts);
  return ws.ensureComputing();
}

// ---------------------------------------------------------------------- memory

function transitionExecutingMemory(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  return transitionToMemory(ws, ts, arg(args, 1), "task-finished", arg(args, 2), stimulusId, out);
}

/** Scatter: the scheduler doesn't know the key yet, so it is not told. */
function transitionReleasedMemory(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  return transitionToMemory(ws, ts, arg(args, 1), false, RUN_ID_SENTINEL, stimulusId, out);
}

function transitionFlightMemory(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  return transitionToMemory(ws, ts, arg(args, 1), "add-keys", RUN_ID_SENTINEL, stimulusId, out);
}

/**
 * The scheduler expects what `next` says, the opposite of what just completed: an
 * execution reports add-keys, a transfer reports task-finished.
 */
function transitionResumedMemory(
  ws: WorkerState,
  ts: TaskState,
  args: Finish,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  let msgType: "add-keys" | "task-finished";
  if (ts.previous === "executing" || ts.previous === "long-running") {
    assert(ts.next === "fetch");
    msgType = "add-keys";
  } else {
    assert(ts.previous === "flight");
    assert(ts.next === "waiting");
    msgType = "task-finished";
  }
  ts.previous = null;
  ts.next = null;
  return transitionToMemory(ws, ts, arg(args, 1), msgType, arg(args, 2), stimulusId, out);
}

/** Put a task's value in the data store: the one place where keys enter `data`. */
function transitionToMemory(
  ws: WorkerState,
  ts: TaskState,
  value: unknown,
  msgType: false | "add-keys" | "task-finished",
  runId: number,
  stimulusId: string,
  out: Instruction[],
): Recs | null {
  if (ws.validate) {
    assert(!ws.data.has(ts.key));
    assert(ts.state !== "memory");
  }
  if (ws.actors.has(ts.key)) {
    ws.actors.set(ts.key, value);
  } else {
    const start = ws.clock();
    try {
      ws.data.set(ts.key, value);
    } catch (err) {
      // A spilling store could not write the value (or a third-party store failed).
      const msg: ErrorMessage = ws.errorMessage(err);
      return one(ts, [
        "error",
        msg.exception,
        msg.traceback,
        msg.exceptionText,
        msg.tracebackText,
        runId,
      ]);
    }
    const stop = ws.clock();
    // The store spilled (or did other slow work).
    if (stop - start > 0.005) ts.addStartStop({ action: "disk-write", start, stop });
  }

  ts.state = "memory";
  if (ts.nbytes === null) ts.nbytes = ws.sizeof(value);
  ws.nbytes += ts.nbytes;
  ts.type = ws.typeName(value);

  let recs: Recs | null = null;
  for (const dep of ts.dependents) {
    dep.waitingForData = withoutTask(dep.waitingForData, ts);
    if (dep.waitingForData.size === 0 && dep.state === "waiting") {
      if (recs === null) recs = new Recs();
      recs.set(dep, "ready");
    }
  }
  ws.log.add4(ts.key, "put-in-memory", stimulusId, ws.stimulusTime);

  // add-keys is only admissible for keys already in memory elsewhere and triggers no
  // transitions on the scheduler; task-finished does.
  if (msgType === "add-keys") {
    out.push(new AddKeysMsg([ts.key], stimulusId));
  } else if (msgType === "task-finished") {
    if (runId === RUN_ID_SENTINEL) {
      throw new AssertionError(
        `task-finished for ${JSON.stringify(ts.key)} without a run_id: it reached memory ` +
          "by another way than its own execution (e.g. a scatter) while assigned here",
      );
    }
    out.push(ws.getTaskFinishedMsg(ts, runId, stimulusId));
  }
  return recs;
}

function transitionReleasedForgotten(ws: WorkerState, ts: TaskState): Recs | null {
  let recs: Recs | null = null;
  // The scheduler should have released the dependents first.
  if (ws.validate) for (const d of ts.dependents) assert(d.state === "forgotten");
  for (const dep of ts.dependencies) {
    dep.dependents = withoutTask(dep.dependents, ts);
    if (dep.state === "released" && dep.dependents.size === 0) {
      if (recs === null) recs = new Recs();
      recs.set(dep, "forgotten");
    }
  }
  ws.purgeState(ts);
  // Marked in case something still refers to it.
  ts.state = "forgotten";
  ws.tasks.delete(ts.key);
  return recs;
}

// ----------------------------------------------------------------------- table

/** A table entry: the function and how many arguments it takes (-1: any). */
export interface TransitionEntry {
  /** The transition function. */
  readonly fn: TransitionFn;
  /** How many arguments after the task it takes (-1: any). */
  readonly arity: number;
}

const ERROR_ARITY = 5;
const MEMORY_ARITY = 2;

/** `(start, finish) -> transition`: exactly the pairs of the seed's table. */
export const TRANSITIONS_TABLE: ReadonlyArray<
  readonly [TaskStateState, TaskStateState, TransitionFn, number]
> = [
  ["cancelled", "error", transitionCancelledReleased, -1],
  ["cancelled", "fetch", transitionCancelledFetch, 0],
  ["cancelled", "long-running", transitionCancelledOrResumedLongRunning, 1],
  ["cancelled", "memory", transitionCancelledReleased, -1],
  ["cancelled", "missing", transitionCancelledReleased, -1],
  ["cancelled", "released", transitionCancelledReleased, -1],
  ["cancelled", "rescheduled", transitionCancelledReleased, -1],
  ["cancelled", "waiting", transitionCancelledWaiting, 0],
  ["resumed", "error", transitionResumedError, ERROR_ARITY],
  ["resumed", "fetch", transitionResumedFetch, 0],
  ["resumed", "long-running", transitionCancelledOrResumedLongRunning, 1],
  ["resumed", "memory", transitionResumedMemory, MEMORY_ARITY],
  ["resumed", "released", transitionResumedReleased, 0],
  ["resumed", "rescheduled", transitionResumedRescheduled, 0],
  ["constrained", "executing", transitionConstrainedExecuting, 0],
  ["constrained", "released", transitionGenericReleased, 0],
  ["error", "released", transitionGenericReleased, 0],
  ["executing", "error", transitionGenericError, ERROR_ARITY],
  ["executing", "long-running", transitionExecutingLongRunning, 1],
  ["executing", "memory", transitionExecutingMemory, MEMORY_ARITY],
  ["executing", "released", transitionExecutingReleased, 0],
  ["executing", "rescheduled", transitionExecutingRescheduled, 0],
  ["fetch", "flight", transitionFetchFlight, 1],
  ["fetch", "missing", transitionFetchMissing, 0],
  ["fetch", "released", transitionFetchReleased, 0],
  ["flight", "error", transitionGenericError, ERROR_ARITY],
  ["flight", "fetch", transitionFlightFetch, 0],
  ["flight", "memory", transitionFlightMemory, MEMORY_ARITY],
  ["flight", "missing", transitionFlightMissing, 0],
  ["flight", "released", transitionFlightReleased, 0],
  ["long-running", "error", transitionGenericError, ERROR_ARITY],
  ["long-running", "memory", transitionExecutingMemory, MEMORY_ARITY],
  ["long-running", "rescheduled", transitionExecutingRescheduled, 0],
  ["long-running", "released", transitionExecutingReleased, 0],
  ["memory", "released", transitionMemoryReleased, 0],
  ["missing", "error", transitionGenericError, ERROR_ARITY],
  ["missing", "fetch", transitionMissingFetch, 0],
  ["missing", "released", transitionMissingReleased, 0],
  ["missing", "waiting", transitionMissingWaiting, 0],
  ["ready", "executing", transitionReadyExecuting, 0],
  ["ready", "released", transitionGenericReleased, 0],
  ["released", "error", transitionGenericError, ERROR_ARITY],
  ["released", "fetch", transitionReleasedFetch, 0],
  ["released", "forgotten", transitionReleasedForgotten, 0],
  ["released", "memory", transitionReleasedMemory, MEMORY_ARITY],
  ["released", "missing", transitionGenericMissing, 0],
  ["released", "waiting", transitionReleasedWaiting, 0],
  ["waiting", "constrained", transitionWaitingConstrained, 0],
  ["waiting", "ready", transitionWaitingReady, 0],
  ["waiting", "released", transitionGenericReleased, 0],
];

const NSTATES = TASK_STATES.length;
const LOOKUP: (TransitionEntry | undefined)[] = new Array(NSTATES * NSTATES).fill(undefined);
for (const [start, finish, fn, arity] of TRANSITIONS_TABLE) {
  LOOKUP[stateIndex(start) * NSTATES + stateIndex(finish)] = { fn, arity };
}

/** The table's entry for `(start, finish)`, if any. */
export function lookupTransition(
  start: TaskStateState,
  finish: TaskStateState,
): TransitionEntry | undefined {
  return LOOKUP[stateIndex(start) * NSTATES + stateIndex(finish)];
}
