import { describe, expect, it } from "vitest";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  GatherDepSuccessEvent,
} from "../events.ts";
import { WorkerState } from "../workerState.ts";
import { stimulusCombinations } from "./stimulusCoverage.ts";

describe("stimulusCombinations", () => {
  it("names the state of the event's task, its dependencies and the keys in flight", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1, validate: true });
    const compute = ComputeTaskEvent.dummy("x", {
      whoHas: { a: ["tcp://127.0.0.1:2"] },
      stimulusId: "s1",
    });
    expect(stimulusCombinations(ws, compute)).toEqual([
      "ComputeTaskEvent @ absent",
      "ComputeTaskEvent.dependency @ absent",
    ]);
    ws.handleStimulus(compute);
    expect(stimulusCombinations(ws, compute)).toEqual([
      "ComputeTaskEvent @ waiting",
      "ComputeTaskEvent.dependency @ flight",
    ]);
    const gathered = new GatherDepSuccessEvent({
      worker: "tcp://127.0.0.1:2",
      totalNbytes: 1,
      data: {},
      stimulusId: "s2",
    });
    expect(stimulusCombinations(ws, gathered)).toEqual([
      "GatherDepSuccessEvent",
      "GatherDepSuccessEvent.in-flight-sent @ flight",
    ]);
    ws.handleStimulus(new FreeKeysEvent({ keys: ["x"], stimulusId: "s3" }));
    // a: cancelled while in flight; x: forgotten.
    expect(
      stimulusCombinations(ws, new FreeKeysEvent({ keys: ["a", "x"], stimulusId: "s4" })),
    ).toEqual([
      "FreeKeysEvent",
      "FreeKeysEvent.key @ cancelled(flight->null)",
      "FreeKeysEvent.key @ absent",
    ]);
    expect(stimulusCombinations(ws, ExecuteSuccessEvent.dummy("x", { stimulusId: "s5" }))).toEqual([
      "ExecuteSuccessEvent @ absent",
    ]);
  });
});
