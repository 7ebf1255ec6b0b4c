import { describe, expect, it } from "vitest";
import { ComputeTaskEvent, ExecuteSuccessEvent, FreeKeysEvent } from "./events.ts";
import { TaskState } from "./taskState.ts";
import { TouchedTasks } from "./touchedTasks.ts";
import { WorkerState } from "./workerState.ts";

describe("TouchedTasks", () => {
  it("records each task once per stimulus, with the state it had then", () => {
    const touched = new TouchedTasks();
    const a = new TaskState("a");
    const b = new TaskState("b");
    touched.begin();
    touched.touch(a);
    b.state = "memory";
    touched.touch(b);
    a.state = "waiting";
    touched.touch(a);
    expect(touched.tasks.slice(0, touched.length)).toEqual([a, b]);
    expect(touched.states.slice(0, touched.length)).toEqual(["released", "memory"]);
    touched.end();
    touched.begin();
    touched.touch(a);
    expect(touched.states.slice(0, touched.length)).toEqual(["waiting"]);
  });

  it("keeps no task once its stimulus is over", () => {
    const ws = new WorkerState({ address: "127.0.0.1:1", validate: true });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("x", { stimulusId: "s1" }),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2" }),
    );
    ws.handleStimulus(new FreeKeysEvent({ keys: ["x"], stimulusId: "s3" }));
    expect(ws.tasks.size).toBe(0);
    const touched = (ws as unknown as { touched: TouchedTasks }).touched;
    expect(touched.length).toBe(0);
    expect(touched.tasks.length).toBeGreaterThan(0);
    expect(touched.tasks.every((t) => t === undefined)).toBe(true);
  });
});
