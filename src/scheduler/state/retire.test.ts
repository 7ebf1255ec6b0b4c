import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** Three workers; x on w1 alone, y on w1 and w2, big (500 bytes) on w2. */
const state = t.threeWorkersWithData;

const retire = (workers: string[], stimulusId = "rt"): SchedulerEvent => ({
  kind: "client-message",
  msg: { op: "retire-workers", workers, clientId: "c", stimulusId },
});

const addKeys = (worker: string, ...keys: string[]): SchedulerEvent =>
  t.fromWorker(worker, { op: "add-keys", keys });

function answer(out: readonly SchedulerMessage[]) {
  const found = out.find(({ msg }) => msg.op === "workers-retired");
  return found?.msg.op === "workers-retired" ? found.msg : undefined;
}

const holders = (s: SchedulerState, key: string) =>
  [...(s.tasks.get(key)?.whoHas ?? [])].map((ws) => ws.address).sort();

describe("retire-workers", () => {
  test("pauses the worker, copies what only it holds, then closes and removes it", () => {
    const s = state();
    const out = s.handleStimulus(retire(["w1"]));
    // w3 holds least: it takes x; y is on w2 already.
    expect(t.summarize(out)).toEqual(["w1 pause", "w3 acquire-replicas"]);
    expect(s.workers.get("w1")?.status).toBe("paused");
    expect(s.running.has(s.workers.get("w1") as never)).toBe(false);
    expect(answer(out)).toBeUndefined();
    s.validateState();
    // A worker being retired stays paused.
    s.handleStimulus(t.fromWorker("w1", { op: "worker-status-change", status: "running" }));
    expect(s.workers.get("w1")?.status).toBe("paused");
    const done = s.handleStimulus(addKeys("w3", "x"));
    expect(t.summarize(done)).toEqual([
      "w1 close-worker",
      "w2 remove-worker w1",
      "w3 remove-worker w1",
      "client:c workers-retired",
    ]);
    expect(answer(done)).toEqual({
      op: "workers-retired",
      retired: ["w1"],
      failed: [],
      stimulusId: "rt",
    });
    expect(s.workers.has("w1")).toBe(false);
    expect(holders(s, "x")).toEqual(["w3"]);
    expect(holders(s, "y")).toEqual(["w2"]);
    expect(s.tasks.get("x")?.state).toBe("memory");
    // The worker's own leaving, later, is stale.
    s.handleStimulus(t.removeWorker("w1"));
    s.validateState();
  });

  test("a worker holding nothing only its own is retired at once; names by host; unknown names fail", () => {
    const s = state();
    const out = s.handleStimulus(retire(["w3", "nowhere"]));
    expect(answer(out)).toEqual({
      op: "workers-retired",
      retired: ["w3"],
      failed: [{ worker: "nowhere", reason: "no connected worker matches it" }],
      stimulusId: "rt",
    });
    expect(s.workers.has("w3")).toBe(false);
    s.validateState();
  });

  test("its unfinished tasks run elsewhere once it is gone, without counting against them", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { z: t.task(["x"], { workers: ["w1"], allowOtherWorkers: true }) }, ["z"]),
    );
    expect(s.tasks.get("z")?.processingOn?.address).toBe("w1");
    s.handleStimulus(retire(["w1"]));
    expect(s.tasks.get("z")?.processingOn?.address).toBe("w1"); // not taken away before
    const done = s.handleStimulus(addKeys("w3", "x"));
    const computes = t.computeTasks(done);
    expect(computes.map((c) => c.worker)).toEqual(["w3"]);
    expect(s.tasks.get("z")?.suspicious).toBe(0);
    s.validateState();
  });

  test("a copy that fails, or whose worker leaves, is asked of another worker", () => {
    const s = state();
    s.handleStimulus(retire(["w1"]));
    const failed = s.handleStimulus(t.fetchErred("w3", "x", -1, "OSError: reset"));
    // w3 still holds least: it is asked again (after the free-keys of its erred copy).
    expect(t.summarize(failed).filter((m) => m.includes("acquire-replicas"))).toEqual([
      "w3 acquire-replicas",
    ]);
    const left = s.handleStimulus(t.removeWorker("w3"));
    expect(t.summarize(left)).toContain("w2 acquire-replicas");
    const done = s.handleStimulus(addKeys("w2", "x"));
    expect(answer(done)?.retired).toEqual(["w1"]);
    expect(holders(s, "x")).toEqual(["w2"]);
    s.validateState();
  });

  test("a copy that arrived and was dropped again is asked for anew", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { z: ["w1"] }));
    expect(t.summarize(s.handleStimulus(retire(["w1"])))).toEqual([
      "w1 pause",
      "w3 acquire-replicas",
    ]);
    // x arrives; then w3 lets its copy go (a replicate's trim, a rebalance): x is
    // on w1 alone again, and no copy of it is on its way any more.
    s.handleStimulus(addKeys("w3", "x"));
    const dropped = s.handleStimulus(t.fromWorker("w3", { op: "release-worker-data", key: "x" }));
    expect(holders(s, "x")).toEqual(["w1"]);
    expect(t.summarize(dropped)).toEqual(["w3 acquire-replicas"]);
    expect(answer(s.handleStimulus(addKeys("w3", "z")))).toBeUndefined();
    const done = s.handleStimulus(addKeys("w3", "x"));
    expect(answer(done)?.retired).toEqual(["w1"]);
    expect(holders(s, "x")).toEqual(["w3"]);
    s.validateState();
  });

  test("with no other worker to take its data it is not retired, and runs again", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateData("c", { x: ["w1"] }));
    const out = s.handleStimulus(retire(["w1"]));
    expect(t.summarize(out)).toEqual(["w1 pause", "w1 unpause", "client:c workers-retired"]);
    expect(answer(out)?.failed).toEqual([
      { worker: "w1", reason: "no other running worker can take its copy of x" },
    ]);
    expect(s.workers.get("w1")?.status).toBe("running");
    s.validateState();
  });

  test("a worker resumed as its retirement fails takes the tasks waiting for a worker at once", () => {
    // x is on w1 alone; w1 is being retired, its copy asked of w2, which runs
    // y (needing x). w2 leaves: y has no running worker (no-worker), and w1's
    // retirement fails (nobody else can take x). Resumed, w1 runs y, in
    // answer to the same stimulus.
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateData("c", { x: ["w1"] }));
    expect(t.summarize(s.handleStimulus(retire(["w1"])))).toEqual([
      "w1 pause",
      "w2 acquire-replicas",
    ]);
    s.handleStimulus(t.updateGraph("c", { y: t.task(["x"]) }, ["y"]));
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w2");
    const out = s.handleStimulus(t.removeWorker("w2"));
    expect(answer(out)?.failed).toEqual([
      { worker: "w1", reason: "no other running worker can take its copy of x" },
    ]);
    expect(s.workers.get("w1")?.status).toBe("running");
    expect(t.summarize(out)).toContain("w1 compute-task y");
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w1");
    s.validateState();
  });

  test("a worker an actor runs or lives on is not retired; a handle to one elsewhere is not copied", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { act: t.task([], { actor: true, workers: ["w3"] }) }, ["act"]),
    );
    for (const stage of ["processing", "memory"]) {
      expect(s.tasks.get("act")?.state).toBe(stage);
      const out = s.handleStimulus(retire(["w3"], `rt-${stage}`));
      expect(t.summarize(out)).toEqual(["w3 pause", "w3 unpause", "client:c workers-retired"]);
      expect(answer(out)).toEqual({
        op: "workers-retired",
        retired: [],
        failed: [{ worker: "w3", reason: "it holds actor act, which cannot be moved" }],
        stimulusId: `rt-${stage}`,
      });
      expect(s.workers.get("w3")?.status).toBe("running");
      s.validateState();
      s.handleStimulus(t.taskFinished("w3", "act", 1));
    }
    // w1 fetched a handle to act (an input of a task of its own), and act's own
    // worker is paused: only x is copied, though no running worker holds act.
    s.handleStimulus(addKeys("w1", "act"));
    s.handleStimulus(t.fromWorker("w3", { op: "worker-status-change", status: "paused" }));
    const out = s.handleStimulus(retire(["w1"]));
    expect(t.summarize(out)).toEqual(["w1 pause", "w2 acquire-replicas"]);
    const acquire = out[1].msg;
    expect(acquire.op === "acquire-replicas" && [...acquire.whoHas.keys()]).toEqual(["x"]);
    const done = s.handleStimulus(addKeys("w2", "x"));
    expect(answer(done)?.retired).toEqual(["w1"]);
    expect(holders(s, "act")).toEqual(["w3"]);
    expect(s.tasks.get("act")?.state).toBe("memory");
    s.validateState();
  });

  test("a failed retirement leaves the worker as its own reports since say (memory pauses)", () => {
    const status = (s: SchedulerState) => s.workers.get("w1")?.status;
    const statusChange = (status: "running" | "paused") =>
      t.fromWorker("w1", { op: "worker-status-change", status });
    const twoWorkers = () => {
      const s = new SchedulerState({ validate: true });
      s.handleStimulus(t.registerWorker("w1"));
      s.handleStimulus(t.registerWorker("w2"));
      s.handleStimulus(t.updateData("c", { x: ["w1"] }));
      return s;
    };

    // Running when retired: paused by the retirement, then by its memory as well.
    const a = twoWorkers();
    expect(t.summarize(a.handleStimulus(retire(["w1"])))).toEqual([
      "w1 pause",
      "w2 acquire-replicas",
    ]);
    a.handleStimulus(statusChange("paused"));
    // w2 leaves before it has x: nobody can take it. w1 is told to resume, but its
    // memory holds it paused, so the scheduler keeps it paused.
    const failed = a.handleStimulus(t.removeWorker("w2"));
    expect(t.summarize(failed)).toContain("w1 unpause");
    expect(answer(failed)?.failed).toHaveLength(1);
    expect(status(a)).toBe("paused");
    expect(a.running.size).toBe(0);
    a.handleStimulus(statusChange("running"));
    expect(status(a)).toBe("running");
    a.validateState();

    // Paused by its memory when retired: not told to pause, nor to resume; it
    // resumed meanwhile, so it runs once the retirement fails.
    const b = twoWorkers();
    b.handleStimulus(statusChange("paused"));
    expect(t.summarize(b.handleStimulus(retire(["w1"])))).toEqual(["w2 acquire-replicas"]);
    b.handleStimulus(statusChange("running"));
    expect(status(b)).toBe("paused"); // being retired
    const failedB = b.handleStimulus(t.removeWorker("w2"));
    expect(t.summarize(failedB).filter((m) => /^w1 (un)?pause/.test(m))).toEqual([]);
    expect(status(b)).toBe("running");
    expect(b.running.has(b.workers.get("w1") as never)).toBe(true);
    b.validateState();
  });

  test("a worker that leaves while retired, or is retired twice, fails", () => {
    const s = state();
    s.handleStimulus(retire(["w1"]));
    const twice = s.handleStimulus(retire(["w1"], "rt2"));
    expect(answer(twice)?.failed).toEqual([
      { worker: "w1", reason: "it is being retired already" },
    ]);
    const left = s.handleStimulus(t.removeWorker("w1"));
    expect(answer(left)).toEqual({
      op: "workers-retired",
      retired: [],
      failed: [{ worker: "w1", reason: "it left before its data was moved" }],
      stimulusId: "rt",
    });
    s.validateState();
  });

  test("given n, the scheduler picks the workers running fewest tasks, then holding least", () => {
    const s = state();
    const n = (count: number, stimulusId = "rn"): SchedulerEvent => ({
      kind: "client-message",
      msg: { op: "retire-workers", n: count, clientId: "c", stimulusId },
    });
    // w3 holds nothing: it goes first, at once.
    const one = s.handleStimulus(n(1, "r1"));
    expect(answer(one)).toMatchObject({ retired: ["w3"], failed: [] });
    // w1 holds x and y, fewer bytes than w2 (y and big), but it runs a task: w2 goes first.
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { workers: ["w1"] }) }, ["a"]));
    expect(s.tasks.get("a")?.processingOn?.address).toBe("w1");
    const two = s.handleStimulus(n(1, "r2"));
    expect(t.summarize(two)[0]).toBe("w2 pause");
    s.validateState();
    expect(() => s.handleStimulus(n(0))).toThrow(/n must be an integer ≥ 1/);
    expect(() =>
      s.handleStimulus({
        kind: "client-message",
        msg: { op: "retire-workers", n: 1, workers: ["w1"], clientId: "c", stimulusId: "x" },
      }),
    ).toThrow(/not both/);
  });

  test("given nothing, the idle workers the cluster can spare (Dask's workers_to_close())", () => {
    const idle: SchedulerEvent = {
      kind: "client-message",
      msg: { op: "retire-workers", clientId: "c", stimulusId: "ri" },
    };
    // Without memory limits, nothing goes while anything is held.
    const held = state();
    expect(answer(held.handleStimulus(idle))).toEqual({
      op: "workers-retired",
      retired: [],
      failed: [],
      stimulusId: "ri",
    });
    expect(held.workers.size).toBe(3);
    // Nothing held: every idle worker goes, not one running a task.
    const empty = new SchedulerState({ validate: true });
    empty.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
    empty.handleStimulus(t.updateGraph("c", { a: t.task([], { workers: ["w2"] }) }, ["a"]));
    expect(answer(empty.handleStimulus(idle))?.retired).toEqual(["w1", "w3"]);
    expect([...empty.workers.keys()]).toEqual(["w2"]);
    // Every worker running a task: none goes.
    expect(
      answer(empty.handleStimulus({ ...idle, msg: { ...idle.msg, stimulusId: "r2" } })),
    ).toMatchObject({
      retired: [],
    });
    empty.validateState();
  });

  test("a worker running a long-running (seceded) task is never picked, as Dask's workers_to_close", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 1));
    const out = s.handleStimulus(
      t.updateGraph("c", { outer: t.task([], { fn: "outer" }) }, ["outer"]),
    );
    const [outer] = t.computeTasks(out);
    expect(outer.worker).toBe("w1");
    // outer secedes: a client of its own, say, submitting more and waiting.
    s.handleStimulus(
      t.fromWorker("w1", {
        op: "long-running",
        key: "outer",
        computeDuration: 0.1,
        runId: outer.msg.runId,
      }),
    );
    s.handleStimulus(t.registerWorker("w2", 2));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          a: t.task([], { fn: "a", workers: ["w2"] }),
          b: t.task([], { fn: "b", workers: ["w2"] }),
        },
        ["a", "b"],
      ),
    );
    // w1 runs nothing but the seceded task: the least busy, yet not picked.
    const byN = s.handleStimulus({
      kind: "client-message",
      msg: { op: "retire-workers", n: 1, clientId: "c", stimulusId: "rt" },
    });
    expect(t.summarize(byN)).not.toContain("w1 close-worker");
    expect(s.workers.has("w1")).toBe(true);
    expect(s.tasks.get("outer")?.processingOn?.address).toBe("w1");
    s.validateState();
  });

  test("workers holding actors are picked last given n, and never as idle ones to spare", () => {
    const s = new SchedulerState({ validate: true });
    const limit = { memoryLimit: 10_000 };
    s.handleStimulus(
      t.registerWorker("w1", 1, {}, undefined, limit),
      t.registerWorker("w2", 1, {}, undefined, limit),
    );
    s.handleStimulus(
      t.updateGraph("c", { act: t.task([], { actor: true, workers: ["w1"] }) }, ["act"]),
    );
    s.handleStimulus(t.taskFinished("w1", "act", 1));
    // w1 holds less (w2 a 500-byte result), and the limits could spare either, but
    // w1's actor cannot move.
    s.handleStimulus(t.updateData("c", { big: ["w2"] }, "ud", 500));
    const idle = s.handleStimulus({
      kind: "client-message",
      msg: { op: "retire-workers", clientId: "c", stimulusId: "ri" },
    });
    expect(t.summarize(idle)[0]).toBe("w2 pause");
    s.validateState();
    // Given n, the same: w1 runs no task and holds less, but w2 goes.
    const fresh = new SchedulerState({ validate: true });
    fresh.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    fresh.handleStimulus(
      t.updateGraph("c", { act: t.task([], { actor: true, workers: ["w1"] }) }, ["act"]),
    );
    fresh.handleStimulus(t.taskFinished("w1", "act", 1));
    fresh.handleStimulus(t.updateData("c", { big: ["w2"] }, "ud", 500));
    const one = fresh.handleStimulus({
      kind: "client-message",
      msg: { op: "retire-workers", n: 1, clientId: "c", stimulusId: "rn" },
    });
    expect(t.summarize(one)[0]).toBe("w2 pause");
    fresh.validateState();
  });

  test("given nothing, workers go fewest bytes first while the limits left are twice the bytes held", () => {
    const s = state({ memoryLimit: 1000 });
    // 800 bytes held: 2,000 of limits left without w3 (nothing held) suffice; 1,000 would not.
    const out = s.handleStimulus({
      kind: "client-message",
      msg: { op: "retire-workers", clientId: "c", stimulusId: "ri" },
    });
    expect(answer(out)).toMatchObject({ retired: ["w3"], failed: [] });
    s.validateState();
  });

  test("workers empty: InvalidStimulus", () => {
    const s = state();
    expect(() => s.handleStimulus(retire([]))).toThrow(InvalidStimulus);
    expect(s.retirements.size).toBe(0);
  });
});

describe("a retirement's copy whose key leaves memory while on its way", () => {
  test("its recipient is told to stop fetching it (free-keys), and the worker retires", () => {
    const s = state();
    expect(t.summarize(s.handleStimulus(retire(["w1"])))).toEqual([
      "w1 pause",
      "w3 acquire-replicas",
    ]);
    // Client c lets x go before w3 has it: w3 must not go on fetching it for good
    // (a new x, computed there, would find it still fetching).
    const out = s.handleStimulus(t.releaseKeys("c", ["x"]));
    const said = t.summarize(out);
    expect(said).toContain("w3 free-keys x");
    // Nothing is left to copy: w1 is retired.
    expect(said).toContain("w1 close-worker");
    expect(answer(out)?.retired).toEqual(["w1"]);
    s.validateState();
  });
});
