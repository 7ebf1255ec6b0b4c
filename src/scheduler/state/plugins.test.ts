import { describe, expect, it } from "vitest";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

describe("SchedulerState.plugins: the transition hook", () => {
  it("is called once per transition log record, with the stimulus; a throwing one is reported, not fatal", () => {
    const s = new SchedulerState({ validate: true });
    const seen: string[] = [];
    const errors: string[] = [];
    s.onPluginError = (name, err) => errors.push(`${name}: ${(err as Error).message}`);
    s.plugins.set("record", {
      transition: (key, start, finish, stimulusId) =>
        seen.push(`${key} ${start}→${finish} ${stimulusId}`),
    });
    s.plugins.set("broken", {
      transition: () => {
        throw new Error("oops");
      },
    });
    s.plugins.set("no hook", {});
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(t.updateGraph("c", { x: t.task(), y: t.task(["x"]) }, ["y"], "g"));
    const runId = t.computeTasks(out)[0]?.msg.runId as number;
    s.handleStimulus(t.taskFinished("w1", "x", runId, 100, "f1"));
    expect(seen).toEqual(
      s.log.toArray().map(([key, start, finish, , sid]) => `${key} ${start}→${finish} ${sid}`),
    );
    expect(seen).toContain("x processing→memory f1");
    expect(errors).toHaveLength(seen.length);
    expect(errors[0]).toBe("broken: oops");
    s.validateState();
  });
});
