import { describe, expect, test } from "vitest";
import type { SchedulerEvent } from "./events.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { SchedulerState as State } from "./schedulerState.ts";
import * as t from "./testing.ts";

const round = (stimulusId = "amm"): SchedulerEvent => ({ kind: "reduce-replicas", stimulusId });

/** The holders of `key`, sorted. */
function holders(s: SchedulerState, key: string): string[] {
  return [...(s.tasks.get(key)?.whoHas ?? [])].map((ws) => ws.address).sort();
}

/**
 * Three workers; x on w1 alone, y on w1 and w2 (100 bytes each), big (500
 * bytes) on w2. y was scattered to w1 and fetched by w2 (`add-keys`): a
 * value scattered to both would keep its two replicas.
 */
function state(): SchedulerState {
  const s = new State({ validate: true });
  s.handleStimulus(t.registerWorker("w1", 1), t.registerWorker("w2", 1), t.registerWorker("w3", 1));
  s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w1"] }));
  s.handleStimulus(t.updateData("c", { big: ["w2"] }, undefined, 500));
  s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["y"] }));
  return s;
}

describe("reduce-replicas", () => {
  test("extra replicas go down to one, from the holder with the most memory; the round is logged", () => {
    const s = state();
    const out = s.handleStimulus(round());
    // y is on w1 (200 bytes) and w2 (600 bytes): w2 drops it.
    expect(t.summarize(out)).toEqual(["w2 remove-replicas y"]);
    expect(holders(s, "y")).toEqual(["w1"]);
    expect(s.replicasDropped).toBe(1);
    expect(s.replicatedTasks.size).toBe(0);
    expect(s.stimulusLog.toArray().at(-1)?.kind).toBe("reduce-replicas");
    s.validateState();
    // Nothing left to drop: no message, no record.
    const records = s.stimulusLog.toArray().length;
    expect(s.handleStimulus(round("amm2"))).toEqual([]);
    expect(s.stimulusLog.toArray().length).toBe(records);
  });

  test("drops of one key in a round never pick the same worker twice, and one replica stays", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { z: ["w1"] }));
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["z"] }));
    s.handleStimulus(t.fromWorker("w3", { op: "add-keys", keys: ["z"] }));
    const out = s.handleStimulus(round());
    // One remove-replicas per worker, with all its keys.
    expect(t.summarize(out)).toEqual(["w2 remove-replicas y,z", "w1 remove-replicas z"]);
    expect(holders(s, "z")).toEqual(["w3"]);
    expect(holders(s, "y")).toEqual(["w1"]);
    expect(s.replicasDropped).toBe(3);
    s.validateState();
  });

  test("a replica is kept for each worker its waiters run on", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph(
        "c",
        { a: t.task(["y"], { workers: ["w1"] }), b: t.task(["y"], { workers: ["w2"] }) },
        ["a", "b"],
      ),
    );
    expect(t.summarize(s.handleStimulus(round()))).toEqual([]);
    expect(holders(s, "y")).toEqual(["w1", "w2"]);
  });

  test("a replica is kept for a waiter not yet assigned", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph(
        "c",
        { a: t.task(["y"], { workers: ["w1"] }), b: t.task(["y"], { workers: ["elsewhere"] }) },
        ["a", "b"],
      ),
    );
    expect(s.tasks.get("b")?.state).toBe("no-worker");
    expect(t.summarize(s.handleStimulus(round()))).toEqual([]);
    expect(holders(s, "y")).toEqual(["w1", "w2"]);
  });

  test("never the copy on the worker a waiter is processing on", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { a: t.task(["y"], { workers: ["w2"] }) }, ["a"]));
    // w2 holds the most memory, but runs a, which needs y: w1 drops it.
    expect(t.summarize(s.handleStimulus(round()))).toEqual(["w1 remove-replicas y"]);
    expect(holders(s, "y")).toEqual(["w2"]);
    s.validateState();
  });

  test("keeps the number of replicas replicate asked for, until the key leaves memory", () => {
    const s = state();
    s.handleStimulus(t.replicate("c", ["x"], { n: 3 }, "r1"));
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["x"] }));
    s.handleStimulus(t.fromWorker("w3", { op: "add-keys", keys: ["x"] }));
    expect(s.tasks.get("x")?.replicasWanted).toBe(3);
    expect(t.summarize(s.handleStimulus(round()))).toEqual(["w2 remove-replicas y"]);
    expect(holders(s, "x")).toEqual(["w1", "w2", "w3"]);
    // Asking for fewer lowers it.
    s.handleStimulus(t.replicate("c", ["x"], { n: 2 }, "r2"));
    expect(s.tasks.get("x")?.replicasWanted).toBe(2);
    s.validateState();
    // Once released, the count is forgotten.
    s.handleStimulus(t.releaseKeys("c", ["x"]));
    expect(s.tasks.get("x")?.replicasWanted ?? 0).toBe(0);
    s.validateState();
  });

  test("a replicate that named workers keeps its replicas on them", () => {
    const s = state();
    s.handleStimulus(t.replicate("c", ["x"], { n: 2, workers: ["w2", "w3"] }, "r1"));
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["x"] }));
    s.handleStimulus(t.fromWorker("w3", { op: "add-keys", keys: ["x"] }));
    // w2 holds the most, but is one of the two replicate asked for: w1 drops x.
    expect(t.summarize(s.handleStimulus(round()))).toEqual([
      "w2 remove-replicas y",
      "w1 remove-replicas x",
    ]);
    expect(holders(s, "x")).toEqual(["w2", "w3"]);
    s.validateState();
  });

  test("a value scattered to several workers (broadcast) keeps its replicas", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { b: ["w1", "w2", "w3"] }));
    expect(s.tasks.get("b")?.replicasWanted).toBe(3);
    expect(t.summarize(s.handleStimulus(round()))).toEqual(["w2 remove-replicas y"]);
    expect(holders(s, "b")).toEqual(["w1", "w2", "w3"]);
  });

  test("an actor is never touched", () => {
    const s = new State({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 1), t.registerWorker("w2", 1));
    const out = s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    const [{ worker, msg }] = t.computeTasks(out);
    s.handleStimulus(t.taskFinished(worker, "a", msg.runId));
    const other = worker === "w1" ? "w2" : "w1";
    s.handleStimulus(t.fromWorker(other, { op: "add-keys", keys: ["a"] }));
    expect(holders(s, "a")).toEqual(["w1", "w2"]);
    expect(t.summarize(s.handleStimulus(round()))).toEqual([]);
    expect(holders(s, "a")).toEqual(["w1", "w2"]);
  });

  test("a paused holder drops first, though it holds less (Dask's _find_dropper)", () => {
    const s = state();
    s.handleStimulus(t.fromWorker("w1", { op: "worker-status-change", status: "paused" }));
    expect(t.summarize(s.handleStimulus(round()))).toEqual(["w1 remove-replicas y"]);
    expect(holders(s, "y")).toEqual(["w2"]);
    s.validateState();
  });

  test("a worker reporting a dropped key again (add-keys) has its replica reinstated", () => {
    const s = state();
    s.handleStimulus(round());
    expect(holders(s, "y")).toEqual(["w1"]);
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["y"] }));
    expect(holders(s, "y")).toEqual(["w1", "w2"]);
    expect(s.replicatedTasks.has(s.tasks.get("y") as never)).toBe(true);
    s.validateState();
  });

  test("a retirement's keys are left alone while it copies them, and trimmed once it is over", () => {
    const s = new State({ validate: true });
    s.handleStimulus(
      t.registerWorker("w1", 1),
      t.registerWorker("w2", 1),
      t.registerWorker("w3", 1),
    );
    s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w1"], p: ["w1"] }));
    // p is on every worker; no task needs it.
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["p"] }));
    s.handleStimulus(t.fromWorker("w3", { op: "add-keys", keys: ["p"] }));
    // a runs on w1; zx and zy, which need x and y, are queued behind it there.
    const allowOthers = { workers: ["w1"], allowOtherWorkers: true };
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          a: t.task([], { workers: ["w1"] }),
          zx: t.task(["x"], allowOthers),
          zy: t.task(["y"], allowOthers),
        },
        ["a", "zx", "zy"],
      ),
    );
    expect(s.tasks.get("zx")?.processingOn?.address).toBe("w1");
    expect(s.tasks.get("zy")?.processingOn?.address).toBe("w1");
    const asked = (out: ReturnType<typeof s.handleStimulus>) =>
      t.summarize(out).filter((line) => line.includes("acquire-replicas"));
    const dropsOf = (out: ReturnType<typeof s.handleStimulus>) =>
      t.summarize(out).filter((line) => line.includes("remove-replicas"));
    const retire: SchedulerEvent = {
      kind: "client-message",
      msg: { op: "retire-workers", workers: ["w1"], clientId: "c", stimulusId: "rt" },
    };
    // x and y are on w1 alone: the retirement asks for copies (p is on w2 and w3).
    const started = s.handleStimulus(retire);
    expect(asked(started)).toHaveLength(1);
    const [to] = asked(started)[0].split(" ");
    // Copies arrive one at a time, with rounds between them. zx and zy stay on
    // w1, which keeps x and y; Dask's rule would drop the new copies on `to`,
    // and the retirement would ask for them again, round after round. The
    // round leaves x, y and p alone (p's holder w1 is being retired too).
    expect(dropsOf(s.handleStimulus(round("amm1")))).toEqual([]);
    expect(asked(s.handleStimulus(t.fromWorker(to, { op: "add-keys", keys: ["x"] })))).toEqual([]);
    expect(dropsOf(s.handleStimulus(round("amm2")))).toEqual([]);
    expect(holders(s, "x")).toEqual(["w1", to].sort());
    const done = s.handleStimulus(t.fromWorker(to, { op: "add-keys", keys: ["y"] }));
    expect(t.summarize(done)).toContain("client:c workers-retired");
    expect(s.workers.has("w1")).toBe(false);
    s.validateState();
    // zx and zy went to `to`, which holds x and y; the next round trims p alone.
    expect(holders(s, "x")).toEqual([to]);
    expect(holders(s, "y")).toEqual([to]);
    expect(dropsOf(s.handleStimulus(round("amm3")))).toHaveLength(1);
    expect(holders(s, "p")).toHaveLength(1);
    expect(s.handleStimulus(round("amm4"))).toEqual([]);
    s.validateState();
  });

  test("a key a retiring worker holds is left alone, though another holder could drop it", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { q: ["w1"] }));
    // w1 retires: x and q are copied to w3 (y is on w2 already).
    const started = s.handleStimulus({
      kind: "client-message",
      msg: { op: "retire-workers", workers: ["w1"], clientId: "c", stimulusId: "rt" },
    });
    expect(t.summarize(started)).toEqual(["w1 pause", "w3 acquire-replicas"]);
    // y is on w1, being retired, and w2: the round leaves it alone.
    expect(s.handleStimulus(round())).toEqual([]);
    expect(holders(s, "y")).toEqual(["w1", "w2"]);
    s.validateState();
  });

  test("the index follows replicas as they come and go", () => {
    const s = state();
    expect([...s.replicatedTasks].map((ts) => ts.key)).toEqual(["y"]);
    s.handleStimulus(t.removeWorker("w2"));
    expect(s.replicatedTasks.size).toBe(0);
    s.validateState();
  });
});
