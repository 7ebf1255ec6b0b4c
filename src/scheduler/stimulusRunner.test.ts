import { describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { Counters } from "./counters.ts";
import type { SchedulerEvent } from "./state/events.ts";
import { SchedulerState } from "./state/schedulerState.ts";
import * as t from "./state/testing.ts";
import { StimulusRunner } from "./stimulusRunner.ts";

function retry(keys: unknown, stimulusId: string): SchedulerEvent {
  return {
    kind: "client-message",
    msg: { op: "retry", keys, clientId: "c", stimulusId },
  } as SchedulerEvent;
}

function runner() {
  const { logger, records } = memoryLogger();
  const counters = new Counters();
  const handled: string[][] = [];
  const r = new StimulusRunner(
    new SchedulerState({ validate: true }),
    logger,
    counters,
    () => {},
    (events) =>
      handled.push(events.map((e) => (e as { msg: { stimulusId: string } }).msg.stimulusId)),
  );
  return { r, counters, handled, records };
}

describe("StimulusRunner", () => {
  it("tells onHandled of each batch handled, and of the well-formed ones of a batch with a malformed one", () => {
    const { r, counters, handled } = runner();
    r.run([retry([], "a"), retry([], "b")]);
    r.run([retry([], "c"), retry("not keys", "bad"), retry([], "d")]);
    expect(handled).toEqual([["a", "b"], ["c"], ["d"]]);
    expect(counters.rejectedMessages).toBe(1);
  });

  it("hands each stimulus of a batch with a refused registration to the machine once", () => {
    const { logger } = memoryLogger();
    const counters = new Counters();
    const state = new SchedulerState({ validate: true });
    const r = new StimulusRunner(state, logger, counters, () => {});
    const out = r.run([
      t.registerWorker("w1", 1, {}, "r1", { name: "gpu" }),
      t.updateGraph("c", { x: t.task() }, ["x"], "g1"),
      // Its name is w1's: refused, and the two before it handled as if it had not come.
      t.registerWorker("w2", 1, {}, "r2", { name: "gpu" }),
    ]);
    expect(out.map((m) => `${m.msg.op} ${m.msg.stimulusId}`)).toEqual(["compute-task g1"]);
    expect(state.stimulusCount).toBe(2);
    expect(counters.rejectedMessages).toBe(1);
    expect(r.failed).toBeNull();
    state.validateState();
  });

  it("handles the stand-in onRejected gives for a refused stimulus in its turn, and asks none for a refused stand-in", () => {
    const { logger } = memoryLogger();
    const counters = new Counters();
    const handled: string[][] = [];
    const asked: string[] = [];
    const r = new StimulusRunner(
      new SchedulerState({ validate: true }),
      logger,
      counters,
      () => {},
      (events) =>
        handled.push(events.map((e) => (e as { msg: { stimulusId: string } }).msg.stimulusId)),
      (ev) => {
        const id = (ev as { msg: { stimulusId: string } }).msg.stimulusId;
        asked.push(id);
        return id === "bad" ? retry([], "stand-in") : retry("still bad", "bad stand-in");
      },
    );
    r.run([retry([], "a"), retry("not keys", "bad"), retry([], "b")]);
    expect(handled).toEqual([["a"], ["stand-in"], ["b"]]);
    r.run([retry("not keys", "worse")]);
    expect(asked).toEqual(["bad", "worse"]);
    expect(counters.rejectedMessages).toBe(3);
    expect(r.failed).toBeNull();
  });
});
