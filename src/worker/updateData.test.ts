import { describe, expect, it } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  SecedeEvent,
  type StateMachineEvent,
} from "./state/events.ts";
import { WorkerState } from "./state/workerState.ts";
import { parseUpdateDataResponse, updateDataHandler, WorkerClosingError } from "./updateData.ts";

/** A handler on a bare state machine; `full` keys cannot be stored. */
function handler(opts: { closing?: boolean; full?: string[] } = {}) {
  const data = new Map<string, unknown>();
  const set = data.set.bind(data);
  data.set = (key: string, value: unknown) => {
    if (opts.full?.includes(key)) throw new RangeError(`no room for ${key}`);
    return set(key, value);
  };
  const state = new WorkerState({ address: "tcp://10.0.0.1:1", validate: true, data });
  const handle = updateDataHandler({
    state,
    refusal: () => (opts.closing === true ? "the worker tcp://10.0.0.1:1 is closing" : null),
    handleStimulus: (...stims: StateMachineEvent[]) => {
      state.handleStimuli(stims);
    },
  });
  return { state, handle };
}

describe("update_data", () => {
  it("stores the values as a scatter and answers their sizes and type names", () => {
    const { state, handle } = handler();
    const answer = handle({
      data: new Map<string, unknown>([
        ["a", 1],
        ["b", new ClonedValue([1, 2, 3])],
      ]),
      stimulusId: "scatter-1",
    });
    expect(answer.status).toBe("OK");
    expect(answer.failed).toEqual({});
    expect(Object.keys(answer.stored)).toEqual(["a", "b"]);
    expect(answer.stored.a.typename).toBe("number");
    expect(answer.stored.b.typename).toBe("Array");
    expect(answer.stored.b.nbytes).toBe(state.tasks.get("b")?.nbytes);
    expect(state.data.get("b")).toEqual([1, 2, 3]); // unwrapped
    expect(state.story("a").map((r) => r.slice(0, 2))).toEqual([
      ["a", "receive-from-scatter"],
      ["a", "put-in-memory"],
      ["a", "released"],
    ]);
    // Plain objects are taken too (a peer may not send a Map).
    expect(Object.keys(handle({ data: { c: "x" } }).stored)).toEqual(["c"]);
  });

  it("answers for a key named __proto__ as for any other", () => {
    const { handle } = handler({ full: ["constructor"] });
    const answer = handle({
      data: new Map<string, unknown>([
        ["__proto__", 42],
        ["constructor", 1],
      ]),
    });
    expect(Object.keys(answer.stored)).toEqual(["__proto__"]);
    expect(Object.keys(answer.failed)).toEqual(["constructor"]);
    const parsed = parseUpdateDataResponse(answer, ["__proto__", "constructor"], "tcp://w:1");
    expect(Object.keys(parsed.stored)).toEqual(["__proto__"]);
    expect(parsed.failed.constructor).toMatch(/no room for constructor/);
  });

  it("a value the store refuses is failed with why, and forgotten here", () => {
    const { state, handle } = handler({ full: ["b"] });
    const answer = handle({ data: { a: 1, b: 2 }, stimulusId: "scatter-2" });
    expect(Object.keys(answer.stored)).toEqual(["a"]);
    expect(answer.failed).toEqual({ b: "RangeError: no room for b" });
    expect(state.tasks.has("b")).toBe(false);
    state.validateState();
  });

  it("refuses values for tasks this worker computes, leaving them be; takes the others", () => {
    const { state, handle } = handler();
    // One thread: x executes, y waits in ready, z waits for its input w, held by a peer.
    state.handleStimuli([
      ComputeTaskEvent.dummy("x", { stimulusId: "compute-x" }),
      ComputeTaskEvent.dummy("y", { stimulusId: "compute-y" }),
      ComputeTaskEvent.dummy("z", { whoHas: { w: ["tcp://10.0.0.2:1"] }, stimulusId: "compute-z" }),
    ]);
    expect(["x", "y", "z", "w"].map((k) => state.tasks.get(k)?.state)).toEqual([
      "executing",
      "ready",
      "waiting",
      "flight",
    ]);
    const answer = handle({ data: { x: 1, y: 2, z: 3, w: 4, v: 5 }, stimulusId: "scatter-3" });
    expect(answer.failed).toEqual({
      x: "it is executing here: this worker computes it, and takes no value for it",
      y: "it is ready here: this worker computes it, and takes no value for it",
      z: "it is waiting here: this worker computes it, and takes no value for it",
      w: "it is flight here: this worker is fetching it from a peer",
    });
    // A key unknown here is taken.
    expect(Object.keys(answer.stored)).toEqual(["v"]);
    expect(["x", "y", "z", "w"].map((k) => state.tasks.get(k)?.state)).toEqual([
      "executing",
      "ready",
      "waiting",
      "flight",
    ]);
    state.validateState();
    // x's run ends as it would have: its result reported to the scheduler.
    const out = state.handleStimuli([ExecuteSuccessEvent.dummy("x", { stimulusId: "done-x" })]);
    expect(out).toContainEqual(expect.objectContaining({ op: "task-finished", key: "x" }));
    state.validateState();
  });

  it("refuses a value for a task of this worker's that seceded", () => {
    const { state, handle } = handler();
    state.handleStimuli([
      ComputeTaskEvent.dummy("x", { stimulusId: "compute-x" }),
      new SecedeEvent({ key: "x", computeDuration: 0.1, stimulusId: "secede-x" }),
    ]);
    expect(state.tasks.get("x")?.state).toBe("long-running");
    const answer = handle({ data: { x: 1 } });
    expect(answer.failed).toEqual({
      x: "it is long-running here: this worker computes it, and takes no value for it",
    });
    expect(state.tasks.get("x")?.state).toBe("long-running");
  });

  it("makes a stimulus id of its own for an empty one, and refuses an empty key", () => {
    const state = new WorkerState({ address: "tcp://10.0.0.1:1" });
    const fed: StateMachineEvent[] = [];
    const handle = updateDataHandler({
      state,
      refusal: () => null,
      handleStimulus: (...stims: StateMachineEvent[]) => {
        fed.push(...stims);
        state.handleStimuli(stims);
      },
    });
    handle({ data: { a: 1 }, stimulusId: "" });
    expect(fed.map((e) => e.stimulusId)).toEqual([expect.stringMatching(/^update-data/)]);
    expect(() => handle({ data: { "": 1 } })).toThrow("keys must be non-empty strings");
  });

  it("refuses while closing, and data that is not a map of keys", () => {
    expect(() => handler({ closing: true }).handle({ data: { a: 1 } })).toThrow(
      "update_data refused: the worker tcp://10.0.0.1:1 is closing",
    );
    // Its own class: a scatter tries another worker.
    expect(() => handler({ closing: true }).handle({ data: { a: 1 } })).toThrow(WorkerClosingError);
    const { handle } = handler();
    expect(() => handle({ data: [1, 2] })).toThrow(
      "update_data: data must be a map of key → value, got [1,2]",
    );
    expect(() => handle({ data: new Map([[1, 2]]) })).toThrow(
      "update_data: keys must be non-empty strings, got 1",
    );
    expect(() => handle({ data: {} })).toThrow("update_data: no data");
  });
});

describe("parseUpdateDataResponse", () => {
  const ok = { status: "OK", stored: { a: { nbytes: 8, typename: "number" } }, failed: {} };
  it("reads what was stored and failed; a key left out is failed", () => {
    expect(parseUpdateDataResponse(ok, ["a", "b"], "w")).toEqual({
      status: "OK",
      stored: { a: { nbytes: 8, typename: "number" } },
      failed: { b: "the worker did not say it stored it" },
    });
  });
  it("throws, naming the worker, for an answer of another shape", () => {
    expect(() => parseUpdateDataResponse(null, ["a"], "w")).toThrow(
      "unexpected update_data answer from w: not an object",
    );
    expect(() => parseUpdateDataResponse({ ...ok, status: "busy" }, ["a"], "w")).toThrow(
      'status "busy"',
    );
    expect(() =>
      parseUpdateDataResponse({ ...ok, stored: { a: { nbytes: -1, typename: "x" } } }, ["a"], "w"),
    ).toThrow("the size or type name of 'a' is malformed");
  });
});
