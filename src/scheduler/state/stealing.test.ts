import { describe, expect, test } from "vitest";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";
import type { WorkerInfo } from "./workerInfo.ts";

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
    const out2 = s.handleStimulus(t.stealResponse("w1", "y", "ready", "steal"));
    expect(t.summarize(out2)).toEqual(["w2 compute-task y"]);
    const y = s.tasks.get("y");
    expect(y?.processingOn?.address).toBe("w2");
    expect(y?.runId).toBe(3);
    expect(s.workers.get("w1")?.processing.has(y as never)).toBe(false);
    expect(s.story("steal").map((e) => e.slice(0, 3))).toEqual([["y", "processing", "processing"]]);
    // The victim's late result for its old run is stale.
    expect(t.summarize(s.handleStimulus(t.taskFinished("w1", "y", 2)))).toEqual(["w1 free-keys y"]);
    s.validateState();
  });

  test("a task the victim already runs stays there", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("x", "w1", "w2", "steal"));
    expect(s.handleStimulus(t.stealResponse("w1", "x", "executing", "steal"))).toEqual([]);
    expect(s.tasks.get("x")?.processingOn?.address).toBe("w1");
    expect(s.steals.size).toBe(0);
    s.validateState();
  });

  test("a task the victim does not know is rescheduled", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("x", "w1", "w2", "steal"));
    const out = s.handleStimulus(t.stealResponse("w1", "x", null, "steal"));
    expect(t.summarize(out)).toEqual(["w1 free-keys x", expect.stringMatching(/compute-task x$/)]);
    s.validateState();
  });

  test("a thief that left meanwhile: the given-up task is placed again", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("y", "w1", "w2", "steal"));
    s.handleStimulus(t.removeWorker("w2"));
    expect(s.steals.size).toBe(1); // still awaiting the victim's answer
    // The victim gave y up: it must run somewhere, here back on w1.
    const out = s.handleStimulus(t.stealResponse("w1", "y", "ready", "steal"));
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

  test("a thief whose memory limit the inputs exceed: not asked; if it is all the same, no steal", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateData("c", { big: ["w1"] }, undefined, 1_000_000));
    s.handleStimulus(t.updateGraph("c", { x: t.task(["big"]), y: t.task(["big"]) }, ["x", "y"]));
    s.handleStimulus(t.registerWorker("w2", 1, {}, undefined, { memoryLimit: 500_000 }));
    // Named or chosen, a thief that would fail the task is not asked.
    expect(s.handleStimulus(t.stealRequest("y", "w1", "w2"))).toEqual([]);
    expect(s.handleStimulus(t.stealRequest("y", "w1"))).toEqual([]);
    expect(s.steals.size).toBe(0);
    // Asked while its limit took the inputs, and answered after it no longer
    // does (no message changes a limit: only a check that cannot disagree
    // with the choice keeps this from happening): the task errs there as a
    // freshly placed one would, and that is no confirmed steal.
    const w2 = s.workers.get("w2") as WorkerInfo;
    w2.memoryLimit = null;
    s.handleStimulus(t.stealRequest("y", "w1", "w2", "steal"));
    expect(s.steals.size).toBe(1);
    w2.memoryLimit = 500_000;
    const out = s.handleStimulus(t.stealResponse("w1", "y", "ready", "steal"));
    expect(t.summarize(out)).toEqual(["client:c task-erred y"]);
    const y = s.tasks.get("y");
    expect(y?.state).toBe("erred");
    expect(y?.exceptionText).toMatch(/^MemoryError: /);
    expect(s.workStealing.confirmed).toBe(0);
    expect(s.story("steal").map((e) => e.slice(0, 3))).toEqual([["y", "processing", "erred"]]);
    s.validateState();
  });

  test("an actor is never stolen", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    s.handleStimulus(t.registerWorker("w2"));
    expect(s.handleStimulus(t.stealRequest("a", "w1", "w2"))).toEqual([]);
    expect(s.handleStimulus(t.stealRequest("a", "w1"))).toEqual([]);
    expect(s.steals.size).toBe(0);
    expect(s.tasks.get("a")?.processingOn?.address).toBe("w1");
    s.validateState();
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
    s.handleStimulus(t.stealRequest("y", "w1", "w2", "steal"));
    s.handleStimulus(t.taskFinished("w1", "y", 2));
    expect(s.steals.size).toBe(0);
    expect(s.handleStimulus(t.stealResponse("w1", "y", "memory", "steal"))).toEqual([]);
    expect(s.tasks.get("y")?.state).toBe("memory");
    s.validateState();
  });
  test("an answer to an earlier steal request is stale: the steal in flight awaits its own", () => {
    const s = setupUnpinned();
    s.handleStimulus(t.stealRequest("x", "w1", "w2", "steal1"));
    // x leaves w1 and comes back (released, then submitted again while w2 is paused).
    s.handleStimulus(t.fromClient({ op: "client-releases-keys", clientId: "c", keys: ["x"] }));
    s.handleStimulus(t.fromWorker("w2", { op: "worker-status-change", status: "paused" }));
    expect(t.summarize(s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"])))).toEqual([
      "w1 compute-task x",
    ]);
    s.handleStimulus(t.fromWorker("w2", { op: "worker-status-change", status: "running" }));
    s.handleStimulus(t.stealRequest("x", "w1", "w2", "steal2"));
    // w1 was running the first x when the first request came: that answer is stale.
    expect(s.handleStimulus(t.stealResponse("w1", "x", "executing", "steal1"))).toEqual([]);
    expect(s.steals.size).toBe(1);
    // w1 gave up the new x: it must move (it stayed on w1, which had dropped it, forever).
    const out = s.handleStimulus(t.stealResponse("w1", "x", "ready", "steal2"));
    expect(t.summarize(out)).toEqual(["w2 compute-task x"]);
    expect(s.tasks.get("x")?.processingOn?.address).toBe("w2");
    s.validateState();
  });
});
