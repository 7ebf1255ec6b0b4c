import { expect, test } from "vitest";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** The nonzero counts of the group `name`, and its bytes in memory. */
function counts(s: SchedulerState, name: string) {
  const tg = s.taskGroups.get(name);
  if (tg === undefined) return null;
  const states = Object.fromEntries(Object.entries(tg.states).filter(([, n]) => n > 0));
  return { states, bytes: tg.memoryBytes };
}

test("a group counts its tasks by state and its results' bytes as they move, with no scan", () => {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(
    t.updateGraph("c", { "x-1": t.task(), "x-2": t.task(), "y-1": t.task(["x-1", "x-2"]) }, [
      "y-1",
    ]),
  );
  expect(counts(s, "x")).toEqual({ states: { processing: 2 }, bytes: 0 });
  expect(counts(s, "y")).toEqual({ states: { waiting: 1 }, bytes: 0 });
  s.handleStimulus(t.taskFinished("w1", "x-1", 1, 300));
  expect(counts(s, "x")).toEqual({ states: { processing: 1, memory: 1 }, bytes: 300 });
  // A result of unknown size counts no bytes.
  s.handleStimulus(t.taskFinished("w1", "x-2", 2, null));
  expect(counts(s, "x")).toEqual({ states: { memory: 2 }, bytes: 300 });
  expect(counts(s, "y")).toEqual({ states: { processing: 1 }, bytes: 0 });
  // y's inputs are released once it is done, their bytes no longer counted.
  s.handleStimulus(t.taskFinished("w1", "y-1", 3, 50));
  expect(counts(s, "x")).toEqual({ states: { released: 2 }, bytes: 0 });
  expect(counts(s, "y")).toEqual({ states: { memory: 1 }, bytes: 50 });
  // All forgotten: the groups are dropped.
  s.handleStimulus(t.releaseKeys("c", ["y-1"]));
  expect(s.taskGroups.size).toBe(0);
  s.validateState();
});
