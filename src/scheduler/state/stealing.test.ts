import { describe, expect, test } from "vitest";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** w1 processing x (run 1) and y; w2 idle. */
function setup(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1", 1, { PIN: 1 }), t.registerWorker("w2"));
  s.handleStimulus(
    t.updateGraph(
      "c",
      { x: t.task([], { resources: { PIN: 1 } }), y: t.task([], { resources: { PIN: 1 } }) },
      ["x", "y"],
    ),
  );
  return s;
}

/** Like `setup`, but x may run anywhere (it only starts on w1 because w2 registers later). */
function setupUnpinned(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateGraph("c", { x: t.task(), y: t.task() }, ["x", "y"]));
  s.handleStimulus(t.registerWorker("w2"));
  return s;
}

describe("work stealing", () => {
  test("a confirmed steal moves the task to the thief with a new run id", () => {
    const s = setupUnpinned();
    const out = s.handleStimulus(t.stealRequest("y", "w1", undefined, "steal"));
    expect(out).toEqual([
      {
        to: { kind: "worker", address: "w1" },
        msg: { op: "steal-request", key: "y", stimulusId: "steal" },
      },
    ]);
    expect(s.steals.get(s.tasks.get("y") as never)?.thief.address).toBe("w2");
    const out2 = s.handleStimulus(t.stealResponse("w1", "y", "ready", "resp"));
    expect(t.summarize(out2)).toEqual(["w2 compute-task y"]);
    const y = s.tasks.get("y");
    expect(y?.processingOn?.address).toBe("w2");
    expect(y?.runId).toBe(3);
    expect(s.workers.get("w1")?.processing.has(y as never)).toBe(false);
    expect(s.story("resp").map((e) => e.slice(0, 3))).toEqual([["y", "processing", "processing"]]);
    // The victim's late result for its old run is stale.
    expect(t.summarize(s.handleStimulus(t.taskFinished("w1", "y", 2)))).toEqual(["w1 free-keys y"]);
    s.validateState();
  });

  test("a task the victim already runs stays there", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("x", "w1", "w2"));
    expect(s.handleStimulus(t.stealResponse("w1", "x", "executing"))).toEqual([]);
    expect(s.tasks.get("x")?.processingOn?.address).toBe("w1");
    expect(s.steals.size).toBe(0);
    s.validateState();
  });

  test("a task the victim does not know is rescheduled", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("x", "w1", "w2"));
    const out = s.handleStimulus(t.stealResponse("w1", "x", null));
    expect(t.summarize(out)).toEqual(["w1 free-keys x", expect.stringMatching(/compute-task x$/)]);
    s.validateState();
  });

  test("a thief that left meanwhile: the given-up task is placed again", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("y", "w1", "w2"));
    s.handleStimulus(t.removeWorker("w2"));
    expect(s.steals.size).toBe(1); // still awaiting the victim's answer
    // The victim gave y up: it must run somewhere, here back on w1.
    const out = s.handleStimulus(t.stealResponse("w1", "y", "ready"));
    expect(t.summarize(out)).toEqual(["w1 free-keys y", "w1 compute-task y"]);
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w1");
    s.validateState();
  });

  test("requests that cannot be honoured are ignored", () => {
    const s = setup();
    // wrong victim, unknown key, thief lacking the resource, no valid thief at all
    expect(s.handleStimulus(t.stealRequest("x", "w2", "w1"))).toEqual([]);
    expect(s.handleStimulus(t.stealRequest("nope", "w1"))).toEqual([]);
    expect(s.handleStimulus(t.stealRequest("x", "w1", "w2"))).toEqual([]);
    expect(s.handleStimulus(t.stealRequest("x", "w1"))).toEqual([]);
    expect(s.steals.size).toBe(0);
  });

  test("a long-running task cannot be stolen; an unsolicited response is ignored", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.fromWorker("w1", { op: "long-running", key: "x", computeDuration: null }));
    expect(s.handleStimulus(t.stealRequest("x", "w1", "w2"))).toEqual([]);
    expect(s.handleStimulus(t.stealResponse("w1", "y", "ready"))).toEqual([]);
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w1");
  });

  test("a task that finishes while the steal is in flight stays finished", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("y", "w1", "w2"));
    s.handleStimulus(t.taskFinished("w1", "y", 2));
    expect(s.steals.size).toBe(0);
    expect(s.handleStimulus(t.stealResponse("w1", "y", "memory"))).toEqual([]);
    expect(s.tasks.get("y")?.state).toBe("memory");
    s.validateState();
  });
});
