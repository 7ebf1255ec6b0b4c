import { describe, expect, it } from "vitest";
import { formatLogEntry } from "../worker/state/errors.ts";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  SecedeEvent,
  UpdateDataEvent,
} from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { eventKeys } from "./eventKeys.ts";
import { FAILURE_STORY_RECORDS, replayFailure } from "./failure.ts";
import { unknownReference } from "./unknownReference.ts";

const compute = (key: string, stimulusId: string, whoHas = {}) =>
  ComputeTaskEvent.dummy(key, { whoHas, stimulusId });

describe("the tasks an event is about", () => {
  it("include its dependencies and its data", () => {
    expect(eventKeys(compute("x", "s", { a: ["tcp://127.0.0.1:2"] }))).toEqual(["x", "a"]);
    expect(eventKeys(new UpdateDataEvent({ data: { d: 1, e: 2 }, stimulusId: "s" }))).toEqual([
      "d",
      "e",
    ]);
    expect(eventKeys(new FreeKeysEvent({ keys: ["f"], stimulusId: "s" }))).toEqual(["f"]);
  });
});

describe("a replay failure", () => {
  it("keeps the latest records of the story", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1 });
    for (let i = 0; i < 30; i++) {
      ws.handleStimulus(compute("x", `compute-${i}`));
      ws.handleStimulus(new FreeKeysEvent({ keys: ["x"], stimulusId: `free-${i}` }));
    }
    const story = ws.story("x");
    expect(story.length).toBeGreaterThan(FAILURE_STORY_RECORDS);
    const ev = compute("x", "last");
    const f = replayFailure(ws, ev, 60, new Error("boom"));
    expect(f.story).toHaveLength(FAILURE_STORY_RECORDS);
    expect(f.story[f.story.length - 1]).toBe(formatLogEntry(story[story.length - 1].slice(0, -1)));
    expect(f).toMatchObject({ eventIndex: 60, eventClass: "ComputeTaskEvent", error: "Error" });
  });
});

describe("events that refer to what came before the stimulus log", () => {
  it("a task that seceded is still running", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1 });
    ws.handleStimulus(compute("x", "c"));
    ws.handleStimulus(new SecedeEvent({ key: "x", computeDuration: 1, stimulusId: "sec" }));
    const done = ExecuteSuccessEvent.dummy("x", { stimulusId: "done" });
    expect(
      unknownReference(
        ws,
        done,
        () => true,
        true,
        () => true,
      ),
    ).toBeNull();
  });

  it("a key the replay saw before it forgot it is not from before", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1 });
    const free = new FreeKeysEvent({ keys: ["gone", "never"], stimulusId: "f" });
    const seen = (k: string) => k === "gone";
    expect(unknownReference(ws, free, () => false, false, seen)).toEqual({
      reason: "FreeKeysEvent of never, never heard of",
      keys: ["never"],
      harmless: true,
    });
  });
});
