/**
 * The shell's guard against taking a handle to an actor for the actor: a
 * worker asked to compute an actor whose handle it holds, fetches or misses.
 * Each case first shows what the seed's state machine does on its own.
 */
import { describe, expect, it } from "vitest";
import { ActorHandleGuard, feedGuarded } from "./actorHandleGuard.ts";
import {
  ExecuteSuccessEvent,
  type Instruction,
  PauseEvent,
  type StateMachineEvent,
  type WorkerState,
} from "./state/index.ts";
import { acquire, compute, free, gathered, newWs, ofClass, W2 } from "./state/testing.ts";

/** A handle as a peer's `get_data` gives it (only its being fetched matters here). */
const HANDLE = { __weftActor: "a", address: W2 };

function guarded(ws: WorkerState): {
  guard: ActorHandleGuard;
  feed: (...stims: StateMachineEvent[]) => Instruction[];
} {
  const guard = new ActorHandleGuard(ws);
  const feed = (...stims: StateMachineEvent[]): Instruction[] => {
    const out: Instruction[] = [];
    feedGuarded(guard, stims, (batch) => out.push(...ws.handleStimuli(batch)));
    return out;
  };
  return { guard, feed };
}

const computeActor = (stimulusId: string) => compute("a", stimulusId, { actor: true });

/** A worker that ran `y` with the handle of actor `a` fetched from W2, then let `y` go. */
function withHandleInMemory(): WorkerState {
  const ws = newWs();
  ws.handleStimulus(compute("y", "s1", { whoHas: { a: [W2] } }));
  ws.handleStimulus(gathered(W2, { a: HANDLE }, "s2"));
  expect(ws.task("a").state).toBe("memory");
  return ws;
}

describe("a handle in memory", () => {
  it("the seed reports the handle as the finished actor", () => {
    const ws = withHandleInMemory();
    const instructions = ws.handleStimulus(computeActor("s3"));
    expect(ofClass(instructions, "TaskFinishedMsg").map((i) => i.key)).toEqual(["a"]);
    expect(ws.actors.has("a")).toBe(false);
  });

  it("guarded, the handle is dropped and the actor runs", () => {
    const ws = withHandleInMemory();
    const { feed } = guarded(ws);
    const instructions = feed(computeActor("s3"));
    expect(ofClass(instructions, "TaskFinishedMsg")).toEqual([]);
    expect(ws.data.has("a")).toBe(false);
    expect(ws.actors.has("a")).toBe(true);
    expect(["waiting", "ready", "executing"]).toContain(ws.task("a").state);
  });

  it("the actor's own object in memory is left alone", () => {
    const ws = newWs();
    const { feed } = guarded(ws);
    feed(computeActor("s1"));
    expect(ws.task("a").state).toBe("executing");
    ws.handleStimulus(successOf("a", "s2"));
    expect(ws.actors.get("a")).toBe("object");
    const instructions = feed(computeActor("s3"));
    expect(ofClass(instructions, "TaskFinishedMsg").map((i) => i.key)).toEqual(["a"]);
    expect(ws.actors.get("a")).toBe("object");
  });
});

describe.each([
  [
    "fetch",
    (ws: WorkerState) => {
      // Paused, the worker fetches nothing: the key stays in fetch.
      ws.handleStimulus(new PauseEvent({ stimulusId: "pause" }), acquire("a", [W2], "s1"));
    },
  ],
  [
    "missing",
    (ws: WorkerState) => {
      // W2 did not have it after all, and no other worker is known to.
      ws.handleStimulus(compute("y", "s1", { whoHas: { a: [W2] } }), gathered(W2, {}, "s1"));
    },
  ],
] as const)("a key in %s", (state, setUp) => {
  it("the seed drops the actor mark on the way to waiting", () => {
    const ws = newWs();
    setUp(ws);
    expect(ws.task("a").state).toBe(state);
    ws.handleStimulus(computeActor("s2"));
    expect(["waiting", "ready", "executing"]).toContain(ws.task("a").state);
    expect(ws.actors.has("a")).toBe(false);
  });

  it("guarded, the key is released first and keeps its mark", () => {
    const ws = newWs();
    setUp(ws);
    const { feed } = guarded(ws);
    feed(computeActor("s2"));
    expect(["waiting", "ready", "executing"]).toContain(ws.task("a").state);
    expect(ws.actors.has("a")).toBe(true);
  });
});

describe("a handle in flight", () => {
  /** `y` needs actor `a`, whose handle is being fetched from W2. */
  function inFlight(): WorkerState {
    const ws = newWs();
    ws.handleStimulus(compute("y", "s1", { whoHas: { a: [W2] } }));
    expect(ws.task("a").state).toBe("flight");
    return ws;
  }

  it("the seed resumes the fetch with the actor mark, which its validation forbids", () => {
    const ws = inFlight();
    ws.handleStimulus(free(["y"], "s2"));
    expect(() => ws.handleStimulus(computeActor("s3"))).toThrow(/resumed/);
  });

  it("guarded, the compute-task waits for the cancelled fetch to end, then runs", () => {
    const ws = inFlight();
    const { guard, feed } = guarded(ws);
    feed(free(["y"], "s2"));
    expect(ws.task("a").state).toBe("cancelled");
    expect(feed(computeActor("s3"))).toEqual([]);
    expect(guard.heldBackKeys).toEqual(["a"]);
    const instructions = feed(gathered(W2, { a: HANDLE }, "s4"));
    expect(guard.heldBackKeys).toEqual([]);
    expect(ofClass(instructions, "Execute").map((i) => i.key)).toEqual(["a"]);
    expect(ws.data.has("a")).toBe(false);
    expect(ws.actors.has("a")).toBe(true);
  });

  it("guarded, a fetch still wanted is cancelled; its dependent runs on the actor", () => {
    const ws = inFlight();
    const { guard, feed } = guarded(ws);
    feed(computeActor("s2"));
    expect(ws.task("a").state).toBe("cancelled");
    expect(guard.heldBackKeys).toEqual(["a"]);
    const instructions = feed(gathered(W2, { a: HANDLE }, "s3"));
    expect(ofClass(instructions, "Execute").map((i) => i.key)).toEqual(["a"]);
    ws.handleStimulus(successOf("a", "s4"));
    expect(ws.actors.get("a")).toBe("object");
    expect(ws.task("y").state).toBe("executing");
  });

  it("a free-keys for the actor drops the held-back compute-task", () => {
    const ws = inFlight();
    const { guard, feed } = guarded(ws);
    feed(free(["y"], "s2"), computeActor("s3"));
    expect(guard.heldBackKeys).toEqual(["a"]);
    feed(free(["a"], "s4"));
    expect(guard.heldBackKeys).toEqual([]);
    const instructions = feed(gathered(W2, { a: HANDLE }, "s5"));
    expect(ofClass(instructions, "Execute")).toEqual([]);
    expect(ws.tasks.has("a")).toBe(false);
  });
});

it("other stimuli pass in the batches they came in", () => {
  const ws = newWs({ nthreads: 2 });
  const guard = new ActorHandleGuard(ws);
  const batches: string[][] = [];
  feedGuarded(guard, [compute("x", "s1"), compute("z", "s1"), computeActor("s1")], (batch) => {
    batches.push(batch.map((e) => (e.cls === "ComputeTaskEvent" ? e.key : e.cls)));
    ws.handleStimuli(batch);
  });
  expect(batches).toEqual([["x", "z"], ["a"]]);
});

function successOf(key: string, stimulusId: string): StateMachineEvent {
  return ExecuteSuccessEvent.dummy(key, { value: "object", stimulusId });
}
