import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runGcScript } from "../../util/testGcScript.ts";
import { keptWorkerState } from "./keptShapes.ts";
import { WorkerState } from "./workerState.ts";

describe("KEPT_SHAPES", () => {
  it("holds the V8 maps of the recommendations, instructions, tasks, state machine and logged events the hot path makes", () => {
    const check = fileURLToPath(new URL("./testKeptShapes.ts", import.meta.url));
    // %HaveSameMap is a V8 internal: a Node.js upgrade may rename or drop it, and then
    // this check needs another way to compare maps (the child's stderr says so).
    const child = spawnSync(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", check],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const result = JSON.parse(child.stdout) as Record<string, boolean>;
    expect(Object.keys(result).sort()).toEqual([
      "AddKeysMsg",
      "BoundedDeque",
      "Execute",
      "GatherDep",
      "HeapSet",
      "HeapSet (constrained)",
      "LongRunningMsg",
      "PyRandom",
      "Recs",
      "ReleaseWorkerDataMsg",
      "RequestRefreshWhoHasMsg",
      "RescheduleMsg",
      "RetryBusyWorkerLater",
      "SharedHolders",
      "StealResponseMsg",
      "TaskCounter",
      "TaskErredMsg",
      "TaskFinishedMsg",
      "TaskState",
      "TaskStateExtras",
      "TouchedTasks",
      "TransitionLog",
      "WorkerState",
      "WorkerState (other options)",
      "logged AcquireReplicasEvent",
      "logged ComputeTaskEvent",
      "logged ExecuteFailureEvent",
      "logged ExecuteSuccessEvent",
      "logged FreeKeysEvent",
      "logged GatherDepBusyEvent",
      "logged GatherDepSuccessEvent",
      "logged RescheduleEvent",
      "logged RetryBusyWorkerEvent",
      "logged SecedeEvent",
      "logged StealRequestEvent",
    ]);
    for (const [cls, kept] of Object.entries(result))
      expect({ cls, kept }).toEqual({ cls, kept: true });
  });

  it("is made by the first WorkerState, handled every kind of event and holds no task", () => {
    new WorkerState({ address: "127.0.0.1:1" });
    const keeper = keptWorkerState();
    expect(keeper).not.toBeNull();
    const ws = keeper as WorkerState;
    expect(ws.tasks.size).toBe(0);
    expect(ws.data.size).toBe(0);
    expect(ws.executing.size + ws.longRunning.size + ws.inFlightWorkers.size).toBe(0);
    ws.validateState();
    const kinds = new Set([...ws.stimulusLog].map((ev) => ev.cls));
    // All 21 kinds but FindMissingEvent, which the seed does not log.
    expect(kinds.size).toBe(20);
    expect(kinds.has("FindMissingEvent")).toBe(false);
    // Later state machines do not make another.
    new WorkerState({ address: "127.0.0.1:2" });
    expect(keptWorkerState()).toBe(keeper);
  });

  it("keeps nothing of the WorkerState whose constructor made it: the first one is collected", () => {
    // In a fresh process, so that the WorkerState is the first and makes the keeper. The
    // failures the keeper replays once held errors whose stacks held that constructor's
    // receiver: the first state machine of every process (the first replay of
    // bench:state) was never freed.
    const script = `
      const { WorkerState } = await import(process.argv[1]);
      let ref;
      (() => { ref = new WeakRef(new WorkerState({ address: "127.0.0.1:1", validate: false })); })();
      await new Promise((r) => setImmediate(r));
      gc();
      gc();
      console.log(JSON.stringify({ collected: ref.deref() === undefined }));
    `;
    const got = runGcScript(
      script,
      [fileURLToPath(new URL("./workerState.ts", import.meta.url))],
      30_000,
    );
    expect(got).toEqual({ collected: true });
  });
});
