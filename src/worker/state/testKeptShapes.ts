/**
 * Run by keptShapes.test.ts in a child `node --allow-natives-syntax`: drives a state
 * machine through the common paths and prints, for each object of a kept class that
 * the hot path produced, whether one of KEPT_SHAPES has the same V8 map. Not part of
 * the package.
 */
import {
  ExecuteFailureEvent,
  FindMissingEvent,
  GatherDepBusyEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  StealRequestEvent,
} from "./events.ts";
import { KEPT_SHAPES, keptWorkerState } from "./keptShapes.ts";
import { Recs } from "./recs.ts";
import { acquire, compute, free, gathered, secede, success, W2 } from "./testing.ts";
import { WorkerState } from "./workerState.ts";

const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (
  a: object,
  b: object,
) => boolean;

const ws = new WorkerState({ address: "127.0.0.1:1", nthreads: 1, validate: false });
const produced: object[] = [];
const run = (...evs: Parameters<WorkerState["handleStimulus"]>) =>
  produced.push(...ws.handleStimulus(...evs));

run(compute("a", "s1", { priority: [0, 1] }));
run(compute("b", "s2", { whoHas: { x: [W2] }, nbytes: { x: 12_500 }, priority: [0, 2] }));
run(success("a", "s3"));
run(gathered(W2, { x: 1 }, "s4"));
run(acquire("y", [W2], "s5", 100));
run(gathered(W2, { y: 2 }, "s6"));
run(ExecuteFailureEvent.dummy("b", { stimulusId: "s7" }));
run(new StealRequestEvent({ key: "x", stimulusId: "s8" }));
for (const ts of ws.tasks.values()) {
  produced.push(ts);
  // A task's extras (errors, cancelled and resumed states); `b` erred.
  const extras = (ts as unknown as { extras: object | null }).extras;
  if (extras !== null) produced.push(extras);
}
const many = new Recs();
for (const ts of ws.tasks.values()) many.set(ts, "released");
produced.push(many, Recs.of(ws.task("x"), "released"));
run(free(["a", "b", "x", "y"], "s9"));
run(compute("c", "s10"));
run(secede("c", "s11"));
run(compute("d", "s12"));
run(new RescheduleEvent({ key: "d", stimulusId: "s13" }));
run(compute("e", "s14", { whoHas: { z: [W2] }, nbytes: { z: 5 } }));
run(new GatherDepBusyEvent({ worker: W2, totalNbytes: 5, stimulusId: "s15" }));
run(new RetryBusyWorkerEvent({ worker: W2, stimulusId: "s16" }));
run(gathered(W2, {}, "s17", 5));
run(new FindMissingEvent({ stimulusId: "s18" }));

const result: Record<string, boolean> = {};
for (const o of produced) {
  const name = o.constructor.name;
  const kept = KEPT_SHAPES.some((k) => haveSameMap(k, o));
  result[name] = (result[name] ?? true) && kept;
}

// The state machine and its parts have the maps of the one kept by keptShapes.ts, and
// so does each logged event.
const keeper = keptWorkerState();
const parts = (w: WorkerState): Record<string, object> => {
  const o = w as unknown as Record<string, object>;
  return {
    WorkerState: w,
    HeapSet: w.ready,
    "HeapSet (constrained)": w.constrained,
    TransitionLog: w.log,
    BoundedDeque: w.stimulusLog,
    TaskCounter: w.taskCounter,
    TouchedTasks: o.touched,
    PyRandom: w.rng,
    SharedHolders: (o.sharedHolders as Map<string, object>).values().next().value as object,
  };
};
const keptParts = keeper === null ? {} : parts(keeper);
for (const [name, o] of Object.entries(parts(ws))) {
  const k = (keptParts as Record<string, object>)[name];
  result[name] = k !== undefined && haveSameMap(k, o);
}
// A state machine made with other options (limits, a real clock, a counter maximum)
// has the same map too.
const configured = new WorkerState({
  address: "127.0.0.1:9",
  nthreads: 4,
  validate: false,
  transferIncomingBytesLimit: 50_000_000,
  transferMessageBytesLimit: 1_000_000,
  transferIncomingCountLimit: 2,
  transitionCounterMax: 50_000,
  clock: () => performance.timeOrigin / 1000 + performance.now() / 1000,
});
configured.handleStimulus(compute("a", "s1"), success("a", "s2"), free(["a"], "s3"));
result["WorkerState (other options)"] = keeper !== null && haveSameMap(keeper, configured);
const keptLogged = keeper === null ? [] : [...keeper.stimulusLog];
for (const ev of ws.stimulusLog) {
  const name = `logged ${ev.cls}`;
  const kept = keptLogged.some((k) => k.cls === ev.cls && haveSameMap(k, ev));
  result[name] = (result[name] ?? true) && kept;
}
process.stdout.write(JSON.stringify(result));
