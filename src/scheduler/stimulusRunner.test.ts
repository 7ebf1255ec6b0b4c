import { describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { Counters } from "./counters.ts";
import type { SchedulerEvent } from "./state/events.ts";
import { SchedulerState } from "./state/schedulerState.ts";
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
});
