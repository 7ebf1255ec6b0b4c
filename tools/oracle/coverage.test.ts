import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  GatherDepSuccessEvent,
} from "../../src/worker/state/events.ts";
import { WorkerState } from "../../src/worker/state/workerState.ts";
import { coverageOf, stimulusCombinations } from "./coverage.ts";

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

describe("coverageOf", () => {
  it("counts the stimuli of every vector under a directory and reports unreadable files", () => {
    const dir = "test/vectors/oracle";
    const c = coverageOf([dir]);
    expect(c.vectors).toBe(readdirSync(dir).length);
    expect(c.unreadable).toEqual([]);
    expect(c.diverged).toEqual([]);
    expect(c.combinations.get("ComputeTaskEvent @ absent")).toBeGreaterThan(0);
    expect(
      c.combinations.get("transition released -> waiting => waiting (ComputeTaskEvent)"),
    ).toBeGreaterThan(0);
    expect(
      c.combinations.get("transition released -> forgotten => forgotten (FreeKeysEvent)"),
    ).toBeGreaterThan(0);

    const tmp = mkdtempSync(join(tmpdir(), "weft-coverage-"));
    writeFileSync(join(tmp, "broken.json"), "{");
    const broken = coverageOf([tmp]);
    expect(broken.vectors).toBe(0);
    expect(broken.unreadable).toHaveLength(1);
    expect(broken.unreadable[0]).toContain("broken.json");
  });
});
