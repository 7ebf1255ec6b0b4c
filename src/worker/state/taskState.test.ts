import { describe, expect, it } from "vitest";
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
