import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "./events.ts";
import {
  AddKeysMsg,
  Execute,
  GatherDep,
  LongRunningMsg,
  ReleaseWorkerDataMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  RetryBusyWorkerLater,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
} from "./instructions.ts";
import { Recs } from "./recs.ts";
import { TaskState } from "./taskState.ts";
import type { WorkerState, WorkerStateOptions } from "./workerState.ts";

/**
 * One live instance of each class the state machine allocates and soon drops.
 *
 * V8's optimized code checks the hidden classes ("maps") of the objects it handles and
 * holds those maps weakly. When no instance of a class is left at a full collection,
 * the maps its constructor built are collected, and every function whose optimized
 * code checked them is thrown away ("weak objects" in `node --trace-deopt`) and must
 * warm up again. Recommendations and instructions are garbage once a stimulus is
 * handled, and tasks once they are forgotten, so each full collection at a quiet
 * moment (an idle worker; a process that replaces its state machine, as the simulator,
 * the tests and `npm run bench:state` do) deoptimized 30–70 functions of the hot path.
 * These instances keep those maps alive for the life of the process, at the cost of
 * about 9 KB (the large recommendations hold 20 tasks).
 *
 * Fields are given values of the kinds the hot path stores (numbers that are not small
 * integers where a field may hold one), so that the maps kept are the ones in use.
 */
export const KEPT_SHAPES: readonly object[] = Object.freeze(keptShapes());

function keptShapes(): object[] {
  const ts = new TaskState("kept-shape");
  ts.duration = 0.5;
  ts.nbytes = 0.5;
  ts.startTime = 0.5;
  ts.stopTime = 0.5;
  ts.priority = [0];
  // Gives the task its extras (see TaskStateExtras), whose map is kept with it.
  ts.previous = "executing";
  ts.next = "fetch";
  ts.exceptionText = "kept-shape";
  ts.tracebackText = "kept-shape";
  ts.spanId = "kept-shape";
  const single = Recs.of(ts, "waiting");
  const grown = new Recs();
  for (let i = 0; i < 20; i++) grown.set(new TaskState(`kept-shape-${i}`), "released");
  return [
    ts,
    (ts as unknown as { extras: object }).extras,
    single,
    grown,
    new GatherDep("", new Set(), 0.5, ""),
    new Execute("", ""),
    new RetryBusyWorkerLater("", ""),
    new TaskFinishedMsg("", 0, 0.5, "", "", {}, null, [], ""),
    new TaskErredMsg("", 0, null, null, "", "", null, [], ""),
    new ReleaseWorkerDataMsg("", ""),
    new RescheduleMsg("", ""),
    new LongRunningMsg("", 0.5, ""),
    new AddKeysMsg([], ""),
    new RequestRefreshWhoHasMsg([], ""),
    new StealResponseMsg("", null, ""),
  ];
}

/**
 * The state machine that keeps the maps of a state machine's own parts alive: the
 * `WorkerState`, its heaps, logs and counters, and the logged copies of each kind of
 * event. A process that drops its state machines (`npm run bench:state` makes one per
 * replay; the simulator and the tests make thousands) otherwise loses those maps at the
 * next full collection once the last state machine is gone, and with them the
 * optimized code of the whole hot path: a benchmark replay recompiled about a hundred
 * functions and took 1.2–1.8 times as long. Made once, by the first `WorkerState`
 * constructed, and driven through the common paths of every event.
 */
let keeper: WorkerState | null = null;
let keeperStarted = false;

/** Called by the `WorkerState` constructor; builds the keeper the first time only. */
export function keepWorkerStateShapes(Ctor: new (o: WorkerStateOptions) => WorkerState): void {
  if (keeperStarted) return;
  keeperStarted = true;
  // Errors made while shaping (the failures it replays, kept in its stimulus log)
  // capture no stack: a captured stack holds its frames' receivers, among them the
  // WorkerState whose constructor called this, which the keeper would then keep alive
  // for the life of the process.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    keeper = shapedKeeper(Ctor);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

function shapedKeeper(Ctor: new (o: WorkerStateOptions) => WorkerState): WorkerState {
  const ws = new Ctor({
    address: "127.0.0.1:1",
    nthreads: 1,
    resources: { R: 1 },
    validate: false,
    // A clock that is not a small integer, so that the fields holding times get the
    // representation a real clock gives them (a later double would change the map).
    clock: () => 0.5,
  });
  warmUp(ws);
  // Fields that may hold numbers beyond small integers (bytes in memory and in flight
  // beyond 2 GiB): widened here once, for the same reason.
  const big = 2 ** 40;
  for (const field of WIDENED_FIELDS) {
    const before = ws[field];
    ws[field] = big;
    ws[field] = before;
  }
  return ws;
}

const WIDENED_FIELDS = [
  "nbytes",
  "transferIncomingBytes",
  "transferIncomingBytesThrottleThreshold",
  "transferIncomingBytesLimit",
  "transferMessageBytesLimit",
] as const;

/** The keeper, for the check that it has the maps a used state machine has. @internal */
export function keptWorkerState(): WorkerState | null {
  return keeper;
}

/**
 * Drive an empty state machine (address 127.0.0.1:1, one thread, resources `{R: 1}`)
 * through a compute, a fetch, a failure, a steal, a secede, a reschedule, a busy peer,
 * a missing key, a network failure, a pause, scattered data, a removed replica, a
 * constrained task cancelled, a failed transfer and a removed worker, then forget
 * every task: about thirty events, which leave it holding no task.
 */
function warmUp(ws: WorkerState): void {
  const p = "127.0.0.1:2";
  const q = "127.0.0.1:3";
  let n = 0;
  const sid = () => `kept-shape-${++n}`;
  const compute = (
    key: string,
    o: Omit<Parameters<typeof ComputeTaskEvent.dummy>[1], "stimulusId"> = {},
  ) => ComputeTaskEvent.dummy(key, { priority: [0, n], ...o, stimulusId: sid() });
  const events = [
    compute("a"),
    compute("b", { whoHas: { x: [p] }, nbytes: { x: 12_500 } }),
    ExecuteSuccessEvent.dummy("a", { value: 0.5, nbytes: 3, stimulusId: sid() }),
    new GatherDepSuccessEvent({
      worker: p,
      data: { x: 1 },
      totalNbytes: 12_500,
      stimulusId: sid(),
    }),
    new AcquireReplicasEvent({ whoHas: { y: [p] }, nbytes: { y: 100 }, stimulusId: sid() }),
    new GatherDepSuccessEvent({ worker: p, data: { y: 2 }, totalNbytes: 100, stimulusId: sid() }),
    ExecuteFailureEvent.dummy("b", { stimulusId: sid() }),
    new StealRequestEvent({ key: "x", stimulusId: sid() }),
    new FreeKeysEvent({ keys: ["a", "b", "x", "y"], stimulusId: sid() }),
    compute("c", { resourceRestrictions: { R: 1 } }),
    new SecedeEvent({ key: "c", computeDuration: 1.5, stimulusId: sid() }),
    compute("d"),
    new RescheduleEvent({ key: "d", stimulusId: sid() }),
    compute("e", { whoHas: { z: [p] }, nbytes: { z: 5 } }),
    new GatherDepBusyEvent({ worker: p, totalNbytes: 5, stimulusId: sid() }),
    new RetryBusyWorkerEvent({ worker: p, stimulusId: sid() }),
    new GatherDepSuccessEvent({ worker: p, data: {}, totalNbytes: 5, stimulusId: sid() }),
    new FindMissingEvent({ stimulusId: sid() }),
    new RefreshWhoHasEvent({ whoHas: { z: [q] }, stimulusId: sid() }),
    new GatherDepNetworkFailureEvent({ worker: q, totalNbytes: 5, stimulusId: sid() }),
    new PauseEvent({ stimulusId: sid() }),
    new UnpauseEvent({ stimulusId: sid() }),
    new UpdateDataEvent({ data: { u: 3 }, stimulusId: sid() }),
    new RemoveReplicasEvent({ keys: ["u"], stimulusId: sid() }),
    compute("f", { resourceRestrictions: { R: 1 } }),
    new CancelComputeEvent({ key: "f", stimulusId: sid() }),
    new AcquireReplicasEvent({ whoHas: { w: [p, q] }, nbytes: { w: 7 }, stimulusId: sid() }),
    GatherDepFailureEvent.fromException(new Error("kept shape"), {
      worker: p,
      totalNbytes: 7,
      stimulusId: sid(),
    }),
    new RemoveWorkerEvent({ worker: q, stimulusId: sid() }),
  ];
  for (const ev of events) ws.handleStimulus(ev);
  ws.handleStimulus(new FreeKeysEvent({ keys: [...ws.tasks.keys()], stimulusId: sid() }));
  // c was long-running when freed: it is cancelled until its thread returns.
  ws.handleStimulus(ExecuteSuccessEvent.dummy("c", { value: 1, stimulusId: sid() }));
}
