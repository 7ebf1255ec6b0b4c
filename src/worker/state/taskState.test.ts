import { describe, expect, it } from "vitest";
import { parseTaskStateRepr } from "../../protocol/clusterDump/pyRepr.ts";
import { ComputeTaskEvent, ExecuteSuccessEvent, FreeKeysEvent } from "./events.ts";
import {
  NO_TASKS,
  stateIndex,
  TASK_STATES,
  TaskState,
  type TaskStateState,
  withoutTask,
} from "./taskState.ts";
import { WorkerState } from "./workerState.ts";

describe("withoutTask", () => {
  const a = new TaskState("a");
  const b = new TaskState("b");

  it("gives the shared empty set back once the last task goes", () => {
    expect(withoutTask(new Set([a]), a)).toBe(NO_TASKS);
    expect(withoutTask(NO_TASKS, a)).toBe(NO_TASKS);
  });

  it("deletes from a larger set in place, and leaves a set without the task alone", () => {
    const two = new Set([a, b]);
    expect(withoutTask(two, a)).toBe(two);
    expect([...two]).toEqual([b]);
    const other = new Set([b]);
    expect(withoutTask(other, a)).toBe(other);
    expect([...other]).toEqual([b]);
  });

  it("leaves a dependency's sets shared and empty once its dependent is forgotten", () => {
    const ws = new WorkerState({ address: "127.0.0.1:1", validate: true });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2" }),
      ComputeTaskEvent.dummy("y", { whoHas: { x: ["127.0.0.1:1"] }, stimulusId: "s3" }),
      ExecuteSuccessEvent.dummy("y", { stimulusId: "s4" }),
    );
    const x = ws.tasks.get("x") as TaskState;
    expect(x.dependents.size).toBe(1);
    ws.handleStimulus(new FreeKeysEvent({ keys: ["y"], stimulusId: "s5" }));
    expect(ws.tasks.has("y")).toBe(false);
    expect(x.dependents).toBe(NO_TASKS);
    expect(x.waiters).toBe(NO_TASKS);
    ws.validateState();
  });
});

describe("stateIndex", () => {
  it("gives each state its position in TASK_STATES", () => {
    expect(TASK_STATES.map(stateIndex)).toEqual(TASK_STATES.map((_, i) => i));
  });

  it("gives NaN for a string that is not a state", () => {
    expect(stateIndex("running" as TaskStateState)).toBeNaN();
  });
});

describe("TaskState's seldom-used fields", () => {
  const extrasOf = (ts: TaskState): unknown => (ts as unknown as { extras: unknown }).extras;
  const defaults = {
    previous: null,
    next: null,
    resourceRestrictions: new Map(),
    exception: null,
    traceback: null,
    exceptionText: "",
    tracebackText: "",
    suspiciousCount: 0,
    metadata: {},
    spanId: null,
    startTime: null,
    stopTime: null,
  };
  const fieldsOf = (ts: TaskState) => ({
    previous: ts.previous,
    next: ts.next,
    resourceRestrictions: ts.resourceRestrictions,
    exception: ts.exception,
    traceback: ts.traceback,
    exceptionText: ts.exceptionText,
    tracebackText: ts.tracebackText,
    suspiciousCount: ts.suspiciousCount,
    metadata: ts.metadata,
    spanId: ts.spanId,
    startTime: ts.startTime,
    stopTime: ts.stopTime,
  });

  it("read as their defaults, and a task given only defaults keeps no object for them", () => {
    const ts = new TaskState("a");
    expect(fieldsOf(ts)).toEqual(defaults);
    const ws = new WorkerState({ address: "127.0.0.1:1", validate: true });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2" }),
    );
    const x = ws.tasks.get("x") as TaskState;
    expect(x.state).toBe("memory");
    expect(fieldsOf(x)).toEqual(defaults);
    expect(extrasOf(x)).toBeNull();
  });

  it("hold what is set, each apart from the others, and go back to their defaults", () => {
    const ts = new TaskState("a");
    const set = {
      previous: "flight" as const,
      next: "waiting" as const,
      resourceRestrictions: new Map([["R", 1]]),
      exception: new Error("boom"),
      traceback: ["frame"],
      exceptionText: "Error: boom",
      tracebackText: "at frame",
      suspiciousCount: 2,
      metadata: { plugin: 1 },
      spanId: "span-1",
      startTime: 1.5,
      stopTime: 2.5,
    };
    for (const [field, value] of Object.entries(set)) {
      const fresh = new TaskState("b");
      (fresh as unknown as Record<string, unknown>)[field] = value;
      expect(fieldsOf(fresh)).toEqual({ ...defaults, [field]: value });
      expect(extrasOf(fresh)).not.toBeNull();
    }
    Object.assign(ts, set);
    expect(fieldsOf(ts)).toEqual(set);
    Object.assign(ts, defaults);
    expect(fieldsOf(ts)).toEqual(defaults);
    expect(ts.toString()).toBe("<TaskState 'a' released>");
  });

  it("toString prints the key as Python's repr does, so that dumps read it back", () => {
    expect(new TaskState("it's").toString()).toBe(`<TaskState "it's" released>`);
    expect(new TaskState("('x', 0)").toString()).toBe("<TaskState ('x', 0) released>");
    expect(new TaskState("a\\b").toString()).toBe("<TaskState 'a\\\\b' released>");
    for (const key of ["it's", "('x', 0)", "a\\b", "q\"'", "with space"]) {
      const ts = new TaskState(key);
      ts.state = "cancelled";
      ts.previous = "executing";
      expect(parseTaskStateRepr(ts.toString())).toEqual({
        key,
        state: "cancelled",
        previous: "executing",
      });
    }
  });
});
