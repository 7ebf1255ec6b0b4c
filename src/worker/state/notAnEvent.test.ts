/**
 * What handleStimulus and the stories do with input that is not what they take: a
 * stimulus that is no event, an event changed after its constructor checked it, a
 * story asked of something that is no key.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../util/pyErrors.ts";
import { ExecuteSuccessEvent } from "./events.ts";
import { ADDR, compute, thrown } from "./testing.ts";
import { WorkerState } from "./workerState.ts";

describe("handleStimulus of what is not an event", () => {
  it.each([
    [null, "null"],
    [{ cls: "PauseEvent", stimulusId: "s1" }, '{"cls":"PauseEvent","stimulusId":"s1"}'],
  ])("refuses %o with a TypeError saying so", (stim, shown) => {
    const ws = new WorkerState({ address: ADDR });
    expect(() => ws.handleStimulus(stim as never)).toThrow(TypeError);
    const err = thrown(() => ws.handleStimulus(stim as never));
    expect(err.message).toMatch(/^handleStimulus: expected a StateMachineEvent/);
    expect(err.message).toContain(`got ${shown}`);
    expect(ws.running).toBe(true);
  });

  it("an event whose key was changed to nothing keeps its own error", () => {
    const ws = new WorkerState({ address: ADDR });
    const ev = ExecuteSuccessEvent.dummy("x", { stimulusId: "s1" });
    (ev as { key: unknown }).key = undefined;
    expect(() => ws.handleStimulus(ev)).toThrow(AssertionError);
  });

  it("story and stimulusStory take anything but a task as a key, as the seed", () => {
    const ws = new WorkerState({ address: ADDR });
    ws.handleStimulus(compute("x", "s1"));
    expect(ws.story(null as never, undefined as never)).toEqual([]);
    expect(ws.stimulusStory(null as never)).toEqual([]);
    expect(ws.story("x")).not.toEqual([]);
  });
});
