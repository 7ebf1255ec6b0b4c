/**
 * Stimuli the seed refuses in the state they find: the port raises the seed's error
 * class (the conformance vectors compare it) with a message that says what was wrong,
 * which event it was and, where it names a task, that task's story.
 */
import { describe, expect, it } from "vitest";
import { AssertionError, KeyError } from "../../util/pyErrors.ts";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  PauseEvent,
  UpdateDataEvent,
} from "./events.ts";
import { ADDR, compute, success, thrown, W2 } from "./testing.ts";
import { WorkerState } from "./workerState.ts";

describe("rejected stimuli", () => {
  it("a result for a task that is not running names the task, its state and story", () => {
    const ws = new WorkerState({ address: ADDR });
    ws.handleStimulus(compute("x", "s1"), success("x", "s2"));
    const err = thrown(() => ws.handleStimulus(success("x", "s3")));
    expect(err).toBeInstanceOf(AssertionError);
    expect(err.message).toMatch(
      /^ExecuteSuccessEvent for "x", which is not running here \(memory\)/,
    );
    expect(err.message).toContain('while handling ExecuteSuccessEvent(stimulus_id="s3", key="x")');
    expect(err.message).toContain("('x', 'executing', 'memory', 'memory', {}, 's2', 0)");
  });

  it("a result for a forgotten task says so", () => {
    const ws = new WorkerState({ address: ADDR });
    const err = thrown(() => ws.handleStimulus(success("ghost", "s1")));
    expect(err).toBeInstanceOf(AssertionError);
    expect(err.message).toMatch(
      /^ExecuteSuccessEvent for "ghost", a task this worker does not hold/,
    );
  });

  it("a transfer's end from a peer nothing is fetched from names the peer", () => {
    const ws = new WorkerState({ address: ADDR });
    const err = thrown(() =>
      ws.handleStimulus(new GatherDepBusyEvent({ worker: W2, totalNbytes: 1, stimulusId: "s1" })),
    );
    expect(err).toBeInstanceOf(KeyError);
    expect(String(err)).toMatch(
      new RegExp(`^KeyError: "${W2}" \\(no transfer from this peer is in flight\\)`),
    );
    expect(err.message).toContain(
      `while handling GatherDepBusyEvent(stimulus_id="s1", worker="${W2}")`,
    );
  });

  it("who_has without a holder, with a holder twice, or with other keys than nbytes", () => {
    const ws = new WorkerState({ address: ADDR });
    expect(
      thrown(() => ws.handleStimulus(compute("y", "s1", { whoHas: { x: [] } }))).message,
    ).toMatch(/^who_has names no holder of "x"/);
    expect(
      thrown(() => ws.handleStimulus(compute("y", "s2", { whoHas: { x: [W2, W2] } }))).message,
    ).toMatch(/^who_has names a holder of "x" twice/);
    const err = thrown(() =>
      ws.handleStimulus(
        new AcquireReplicasEvent({ whoHas: { x: [W2] }, nbytes: { z: 1 }, stimulusId: "s3" }),
      ),
    );
    expect(err).toBeInstanceOf(AssertionError);
    expect(err.message).toMatch(/^who_has and nbytes name different keys: \["x"\] and \["z"\]/);
  });

  it("cancel-compute of a task others here depend on names them", () => {
    const ws = new WorkerState({ address: ADDR });
    ws.handleStimulus(
      compute("x", "s1"),
      success("x", "s2"),
      compute("y", "s3", { whoHas: { x: [W2] } }),
      success("y", "s4"),
      new FreeKeysEvent({ keys: ["x"], stimulusId: "s5" }),
      new PauseEvent({ stimulusId: "s6" }),
      compute("x", "s7"),
    );
    expect(ws.tasks.get("x")?.state).toBe("ready");
    const err = thrown(() =>
      ws.handleStimulus(new CancelComputeEvent({ key: "x", stimulusId: "s8" })),
    );
    expect(err).toBeInstanceOf(AssertionError);
    expect(err.message).toMatch(/^cancel-compute of "x", which tasks here depend on: \["y"\]/);
  });

  it("a restriction on a resource this worker does not have names the resource, the task and what there is", () => {
    const ws = new WorkerState({ address: ADDR, resources: { R: 1 } });
    const err = thrown(() =>
      ws.handleStimulus(compute("x", "s1", { resourceRestrictions: { GPU: 1 } })),
    );
    expect(err).toBeInstanceOf(KeyError);
    expect(String(err)).toMatch(
      /^KeyError: "GPU" \(task "x" is restricted to a resource this worker does not have; it has "R"\)/,
    );
  });

  it("data for a task assigned here that cannot be reported finished", () => {
    const ws = new WorkerState({ address: ADDR });
    ws.handleStimulus(compute("x", "s1"));
    expect(ws.tasks.get("x")?.state).toBe("executing");
    // A scatter of x while it runs: the seed takes it, then cannot say task-finished.
    const err = thrown(() =>
      ws.handleStimulus(new UpdateDataEvent({ data: { x: 1 }, stimulusId: "s2" })),
    );
    expect(err).toBeInstanceOf(AssertionError);
    expect(err.message).toMatch(/^task-finished for "x" without a run_id/);
  });
});
