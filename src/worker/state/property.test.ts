/**
 * Property-based test of the worker state machine: random valid stimuli from a fake
 * scheduler, fake peers and a fake worker shell (src/worker/state/fuzz/), with
 * `validateState()` after every stimulus and a liveness check at the end of every run.
 *
 * A failure prints the fast-check counterexample `[seed, steps]` (steps shrink towards
 * the shortest failing prefix) and the last stimuli; replay it with
 * `runFuzz({ seed, steps })` from src/worker/state/fuzz/index.ts.
 *
 * Environment: WEFT_FUZZ_RUNS (default 200), WEFT_FUZZ_STEPS (default 500),
 * WEFT_FUZZ_SEED (fast-check seed), WEFT_FUZZ_REPORT=1 (print the coverage).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidTransition } from "./errors.ts";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  GatherDepFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RemoveReplicasEvent,
  type StateMachineEvent,
  UnpauseEvent,
} from "./events.ts";
import { DEFAULT_WEIGHTS, type FuzzResult, runFuzz } from "./fuzz/index.ts";
import { TRANSITIONS_TABLE } from "./transitions.ts";
import { WorkerState } from "./workerState.ts";

const RUNS = Number(process.env.WEFT_FUZZ_RUNS ?? 200);
const STEPS = Number(process.env.WEFT_FUZZ_STEPS ?? 500);
// A fixed seed by default, so that `npm test` is deterministic; WEFT_FUZZ_SEED picks
// another (WEFT_FUZZ_SEED=random draws one, printed on failure) to explore further.
const FC_SEED =
  process.env.WEFT_FUZZ_SEED === "random"
    ? undefined
    : Number(process.env.WEFT_FUZZ_SEED ?? 20261130);

/**
 * Always STEPS, but shrinks like an integer towards 1: a run with fewer steps replays
 * the same prefix (the generator's choices depend only on the seed and the state), so
 * fast-check finds the shortest failing prefix.
 */
class StepsArbitrary extends fc.Arbitrary<number> {
  private readonly shrinker = fc.integer({ min: 1, max: STEPS });
  generate(): fc.Value<number> {
    return new fc.Value(STEPS, undefined);
  }
  canShrinkWithoutContext(value: unknown): value is number {
    return this.shrinker.canShrinkWithoutContext(value);
  }
  shrink(value: number, context: unknown): fc.Stream<fc.Value<number>> {
    return this.shrinker.shrink(value, context);
  }
}

function add(into: Record<string, number>, from: Readonly<Record<string, number | undefined>>) {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + (v ?? 0);
}

describe("worker state machine under random valid stimuli", () => {
  it("seed 1621894099: a wanted task dropped during the drain by the known seed bug is not a failure", () => {
    // A compute-task turned y-29 (in flight) into resumed(flight->waiting); the transfer of
    // load-35, cancelled, then released its dependencies, y-29 with them (the seed does
    // the same). The driver counts it as the known seed bug instead of failing the drain.
    // The stream as generated before the recompute, resecede, takeOver,
    // computeForWaiters and failWaitedFor actions existed (a weight of 0 draws the same random numbers).
    const r = runFuzz({
      seed: 1621894099,
      steps: 499,
      weights: { recompute: 0, resecede: 0, takeOver: 0, computeForWaiters: 0, failWaitedFor: 0 },
    });
    expect(r.knownSeedBugs.droppedResumedTask).toBeGreaterThanOrEqual(1);
  });

  it("seed 1282512645: a ready task the worker turns to missing for a dependent is a known seed quirk, not a failure", () => {
    // compute-task made x-0, which dependents here waited for, ready; a transfer of
    // load-4, resumed(flight->waiting), failed, and load-4 going released -> waiting
    // recommended `fetch` for x-0: ready -> released -> missing, the compute request
    // forgotten (the seed does the same). Found by a 1,000-run x 2,000-step property run.
    const r = runFuzz({ seed: 1282512645, steps: 98 });
    expect(r.knownSeedBugs.computeDroppedForFetch).toBeGreaterThanOrEqual(1);
  });

  it("seed 909265135: no task is made to wait for an actor cancelled here, a known seed quirk", () => {
    // z-1, an actor, was freed while executing (cancelled, still in `actors`); a
    // compute-task of load-4 with z-1 on peers would resume it for fetching, and the
    // seed's _validate_task_waiting rejects its own state (the oracle recorded the
    // reference raising InvalidTaskState at that step; scenario-actor-resumed-for-fetch).
    // Found by a 300-run x 2,000-step property run.
    const r = runFuzz({ seed: 909265135, steps: 14 });
    expect(r.skipped["compute: a dependency in actors but not in memory here (seed quirk)"]).toBe(
      1,
    );
  });

  it(`stays valid and completes everything (${RUNS} runs x ${STEPS} stimuli)`, () => {
    let runs = 0;
    let stimuli = 0;
    const events: Record<string, number> = {};
    const instructions: Record<string, number> = {};
    const transitions: Record<string, number> = {};
    const skipped: Record<string, number> = {};
    const knownSeedBugs: Record<string, number> = {};
    let staleRunIds = 0;
    let drain = 0;
    const t0 = performance.now();

    fc.assert(
      fc.property(
        fc.noShrink(fc.integer({ min: 0, max: 0x7fffffff })),
        new StepsArbitrary(),
        (seed, steps) => {
          const r: FuzzResult = runFuzz({ seed, steps });
          runs++;
          stimuli += r.steps;
          drain += r.drainStimuli;
          add(events, r.events);
          add(instructions, r.instructions);
          add(transitions, r.transitions);
          add(skipped, r.skipped);
          add(knownSeedBugs, r.knownSeedBugs);
          staleRunIds += r.staleRunIds;
        },
      ),
      { numRuns: RUNS, seed: FC_SEED },
    );

    expect(runs).toBe(RUNS);
    expect(stimuli).toBe(RUNS * STEPS);
    if (process.env.WEFT_FUZZ_REPORT) {
      const table = TRANSITIONS_TABLE.map(([a, b]) => `${a}->${b}`);
      console.info(
        JSON.stringify(
          {
            runs,
            stimuli,
            drainStimuli: drain,
            seconds: ((performance.now() - t0) / 1000).toFixed(1),
            events,
            instructions,
            skipped,
            knownSeedBugs,
            staleRunIds,
            tableTransitionsNotSeen: table.filter((t) => !transitions[t]),
            transitions,
          },
          null,
          1,
        ),
      );
    }
  }, 300_000);

  it("is deterministic: a seed gives the same run", () => {
    const a = runFuzz({ seed: 12345, steps: 300 });
    const b = runFuzz({ seed: 12345, steps: 300 });
    expect(b).toEqual(a);
  });

  it("covers every event class and almost every transition of the table", () => {
    const events: Record<string, number> = {};
    const instructions: Record<string, number> = {};
    const transitions: Record<string, number> = {};
    const eventsAt: Record<string, number> = {};
    const actions: Record<string, number> = {};
    for (let seed = 0; seed < 40; seed++) {
      const r = runFuzz({ seed, steps: 500 });
      add(events, r.events);
      add(actions, r.actions);
      add(eventsAt, r.eventsAt);
      add(instructions, r.instructions);
      add(transitions, r.transitions);
    }
    for (const cls of EVENT_CLASSES) expect(events[cls] ?? 0, cls).toBeGreaterThan(0);
    for (const kind of Object.keys(DEFAULT_WEIGHTS))
      expect(actions[kind] ?? 0, kind).toBeGreaterThan(0);
    for (const cls of INSTRUCTION_CLASSES) expect(instructions[cls] ?? 0, cls).toBeGreaterThan(0);
    // compute-task in every state the seed's handler tells apart, the already-processing
    // ones too (the published fuzz vectors send it to waiting and ready tasks).
    const computeTaskStates = new Set(
      Object.keys(eventsAt)
        .filter((k) => k.startsWith("ComputeTaskEvent @ "))
        .map((k) => k.slice("ComputeTaskEvent @ ".length).replace(/\(.*$/, "")),
    );
    for (const state of COMPUTE_TASK_STATES) expect(computeTaskStates, state).toContain(state);
    // Both kinds of resumed task: the one asked for while in flight, the one fetched while it runs.
    for (const resumed of ["resumed(flight->waiting)", "resumed(executing->fetch)"]) {
      expect(eventsAt[`ComputeTaskEvent @ ${resumed}`] ?? 0, resumed).toBeGreaterThan(0);
    }
    // A second secede (after rejoin) finds the task long-running already.
    expect(eventsAt["SecedeEvent @ long-running"] ?? 0).toBeGreaterThan(0);
    // Not reachable with valid stimuli: a missing task is never recommended error, nor a
    // cancelled one missing. Rare: released -> error needs a store failing on a scatter,
    // and the resumed(executing->fetch) ones a root task fetched while it runs.
    const unseen = TRANSITIONS_TABLE.map(([a, b]) => `${a}->${b}`).filter((t) => !transitions[t]);
    expect(unseen.length).toBeLessThanOrEqual(4);
    for (const t of unseen) expect(RARE_TRANSITIONS).toContain(t);
  });
});

const RARE_TRANSITIONS = [
  "cancelled->missing",
  "missing->error",
  "released->error",
  "resumed->error",
  "resumed->long-running",
  "resumed->rescheduled",
];

const COMPUTE_TASK_STATES = [
  "absent",
  "waiting",
  "ready",
  "constrained",
  "executing",
  "long-running",
  "memory",
  "released",
  "fetch",
  "flight",
  "missing",
  "cancelled",
  "resumed",
  "error",
];

const EVENT_CLASSES: readonly StateMachineEvent["cls"][] = [
  "PauseEvent",
  "UnpauseEvent",
  "RetryBusyWorkerEvent",
  "GatherDepSuccessEvent",
  "GatherDepBusyEvent",
  "GatherDepNetworkFailureEvent",
  "GatherDepFailureEvent",
  "RemoveWorkerEvent",
  "ComputeTaskEvent",
  "ExecuteSuccessEvent",
  "ExecuteFailureEvent",
  "RescheduleEvent",
  "CancelComputeEvent",
  "FindMissingEvent",
  "RefreshWhoHasEvent",
  "AcquireReplicasEvent",
  "RemoveReplicasEvent",
  "FreeKeysEvent",
  "StealRequestEvent",
  "UpdateDataEvent",
  "SecedeEvent",
];

const INSTRUCTION_CLASSES = [
  "GatherDep",
  "Execute",
  "RetryBusyWorkerLater",
  "TaskFinishedMsg",
  "TaskErredMsg",
  "ReleaseWorkerDataMsg",
  "RescheduleMsg",
  "LongRunningMsg",
  "AddKeysMsg",
  "RequestRefreshWhoHasMsg",
  "StealResponseMsg",
];

/**
 * Stimuli the generator does not send, because the seed (Dask 2023.7.0's
 * worker_state_machine.py) fails on them and the port, faithfully, fails the same way.
 * Each was reproduced on the seed itself. Should the port ever fix one of these, its
 * test here fails: relax the matching rule in fuzz/stimulusGenerator.ts (or driver.ts).
 */
describe("seed bugs the generator steers clear of (faithfully ported)", () => {
  const A = "tcp://10.0.0.1:9000";
  const W2 = "tcp://10.0.0.2:9001";
  const W3 = "tcp://10.0.0.2:9002";
  const states = (ws: WorkerState) =>
    Object.fromEntries([...ws.tasks].map(([k, ts]) => [k, String(ts)]));

  it("compute-task of a task in fetch with a new dependency: RecommendationsConflict", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "s0" }),
      new AcquireReplicasEvent({ whoHas: { x: [W2] }, nbytes: { x: 1 }, stimulusId: "s1" }),
    );
    expect(() =>
      ws.handleStimulus(ComputeTaskEvent.dummy("x", { whoHas: { d: [W3] }, stimulusId: "s2" })),
    ).toThrow(InvalidTransition);
  });

  it("retrying an erred task whose dependency was freed: RecommendationsConflict", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("d", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("d", { stimulusId: "s2" }),
      ComputeTaskEvent.dummy("x", { whoHas: { d: [W2] }, stimulusId: "s3" }),
      ExecuteFailureEvent.dummy("x", { stimulusId: "s4" }),
      new FreeKeysEvent({ keys: ["d"], stimulusId: "s5" }),
    );
    expect(() =>
      ws.handleStimulus(ComputeTaskEvent.dummy("x", { whoHas: { d: [W2] }, stimulusId: "s6" })),
    ).toThrow(InvalidTransition);
  });

  it("compute-task of a task in flight gives who_has to a missing dependency", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      new AcquireReplicasEvent({ whoHas: { x: [W2] }, nbytes: { x: 1 }, stimulusId: "s1" }),
      new GatherDepSuccessEvent({ worker: W2, data: {}, totalNbytes: 1, stimulusId: "s2" }),
      new AcquireReplicasEvent({ whoHas: { y: [W3] }, nbytes: { y: 1 }, stimulusId: "s3" }),
      ComputeTaskEvent.dummy("y", { whoHas: { x: [W2] }, stimulusId: "s4" }),
    );
    expect(states(ws)).toEqual({
      x: "<TaskState 'x' missing>",
      y: "<TaskState 'y' resumed(flight->waiting)>",
    });
    expect([...ws.task("x").whoHas]).toEqual([W2]);
    expect(() => ws.validateState()).toThrow(/^x :: missing/);
  });

  it("releasing a dependent cancels a task computed while in flight, silently", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2" }),
      ComputeTaskEvent.dummy("y", { whoHas: { x: [W2] }, stimulusId: "s3" }),
      ExecuteSuccessEvent.dummy("y", { stimulusId: "s4" }),
      new FreeKeysEvent({ keys: ["x"], stimulusId: "s5" }),
      new AcquireReplicasEvent({ whoHas: { x: [W3] }, nbytes: { x: 1 }, stimulusId: "s6" }),
      ComputeTaskEvent.dummy("x", { runId: 7, stimulusId: "s7" }),
    );
    expect(states(ws).x).toBe("<TaskState 'x' resumed(flight->waiting)>");
    ws.handleStimulus(new RemoveReplicasEvent({ keys: ["y"], stimulusId: "s8" }));
    expect(states(ws).x).toBe("<TaskState 'x' cancelled(flight)>");
    const out = ws.handleStimulus(
      new GatherDepSuccessEvent({ worker: W3, data: { x: 1 }, totalNbytes: 1, stimulusId: "s9" }),
    );
    // The scheduler waits for x (run_id 7) forever.
    expect(out).toEqual([]);
    expect(ws.tasks.size).toBe(0);
    ws.validateState();
  });

  it("a transfer with a cancelled task and its dependency: AssertionError", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "s0" }),
      ComputeTaskEvent.dummy("x", { whoHas: { b: [W2] }, priority: [2], stimulusId: "s1" }),
      new AcquireReplicasEvent({ whoHas: { a: [W2] }, nbytes: { a: 1 }, stimulusId: "s2" }),
      new UnpauseEvent({ stimulusId: "s3" }),
      new FreeKeysEvent({ keys: ["x"], stimulusId: "s4" }),
      ComputeTaskEvent.dummy("b", { whoHas: { a: [W2] }, stimulusId: "s5" }),
      new FreeKeysEvent({ keys: ["b"], stimulusId: "s6" }),
    );
    expect([...(ws.inFlightWorkers.get(W2) ?? [])]).toEqual(["a", "b"]);
    expect(() =>
      ws.handleStimulus(
        new GatherDepSuccessEvent({
          worker: W2,
          data: { a: 1, b: 2 },
          totalNbytes: 2,
          stimulusId: "s7",
        }),
      ),
    ).toThrow(/assertion failed/);
  });

  it("a transfer with a resumed task missing and its cancelled dependency", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("t", { whoHas: { b: [W2], a: [W2] }, stimulusId: "s1" }),
      new FreeKeysEvent({ keys: ["t"], stimulusId: "s2" }),
      ComputeTaskEvent.dummy("b", { whoHas: { a: [W2] }, stimulusId: "s3" }),
    );
    expect([...(ws.inFlightWorkers.get(W2) ?? [])]).toEqual(["a", "b"]);
    ws.handleStimulus(
      new GatherDepSuccessEvent({ worker: W2, data: { a: 1 }, totalNbytes: 2, stimulusId: "s4" }),
    );
    // b waits for a, which was received and dropped.
    expect(states(ws)).toEqual({ a: "<TaskState 'a' released>", b: "<TaskState 'b' waiting>" });
    expect(() => ws.validateState()).toThrow(/^\[\["a","ensure-task-exists"/);
  });

  it("a store failing for a resumed task: AssertionError", () => {
    const failing = Object.assign(new Map<string, unknown>(), {
      set(): never {
        throw new Error("Could not serialize");
      },
    });
    const ws = new WorkerState({ address: A, data: failing });
    ws.handleStimulus(
      new AcquireReplicasEvent({ whoHas: { x: [W2] }, nbytes: { x: 1 }, stimulusId: "s1" }),
      ComputeTaskEvent.dummy("x", { stimulusId: "s2" }),
    );
    expect(() =>
      ws.handleStimulus(
        new GatherDepSuccessEvent({ worker: W2, data: { x: 1 }, totalNbytes: 1, stimulusId: "s3" }),
      ),
    ).toThrow(/assertion failed/);
  });

  it("a dependency that fails to transfer leaves its dependent waiting (dask#6705)", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("y", { whoHas: { x: [W2] }, stimulusId: "s1" }),
      new GatherDepFailureEvent({
        worker: W2,
        totalNbytes: 1,
        exception: "boom",
        traceback: null,
        exceptionText: "boom",
        tracebackText: "",
        stimulusId: "s2",
      }),
    );
    expect(states(ws)).toEqual({ x: "<TaskState 'x' error>", y: "<TaskState 'y' waiting>" });
    expect(() => ws.validateState()).toThrow(/^\[\["x","ensure-task-exists"/);
  });

  it("cancel-compute of a waiting task that has dependents: AssertionError", () => {
    const ws = new WorkerState({ address: A });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2" }),
      ComputeTaskEvent.dummy("y", { whoHas: { x: [W2] }, stimulusId: "s3" }),
      ExecuteSuccessEvent.dummy("y", { stimulusId: "s4" }),
      new FreeKeysEvent({ keys: ["x"], stimulusId: "s5" }),
      new PauseEvent({ stimulusId: "s6" }),
      ComputeTaskEvent.dummy("x", { stimulusId: "s7" }),
    );
    expect(states(ws).x).toBe("<TaskState 'x' ready>");
    expect(() => ws.handleStimulus(new CancelComputeEvent({ key: "x", stimulusId: "s8" }))).toThrow(
      /^cancel-compute of "x", which tasks here depend on: \["y"\]/,
    );
  });
});
