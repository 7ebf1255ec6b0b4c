import { describe, expect, test } from "vitest";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";
import { SCATTERED_DATA_LOST } from "./transitions.ts";

function state(): SchedulerState {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
  return s;
}

function answer(out: ReturnType<SchedulerState["handleStimulus"]>) {
  const found = out.find(({ msg }) => msg.op === "data-updated");
  return found?.msg.op === "data-updated" ? found.msg : undefined;
}

describe("update-data (scatter)", () => {
  test("records the values in memory on their workers, wanted by the client, then answers", () => {
    const s = state();
    const out = s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w1", "w2"] }, "scatter-1"));
    expect(t.summarize(out)).toEqual([
      "client:c key-in-memory x",
      "client:c key-in-memory y",
      "client:c data-updated",
    ]);
    expect(answer(out)).toEqual({ op: "data-updated", rejected: [], stimulusId: "scatter-1" });
    const x = s.tasks.get("x");
    expect(x).toMatchObject({ state: "memory", runSpec: null, nbytes: 100, typename: "int" });
    expect([...(s.tasks.get("y")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1", "w2"]);
    expect(s.workers.get("w1")?.nbytes).toBe(200);
    expect(s.clients.get("c")?.wantsWhat.size).toBe(2);
    expect(s.story("x").map((e) => e.slice(0, 3))).toEqual([["x", "released", "memory"]]);
    s.validateState();
  });

  test("a task that needs scattered data runs where the data is", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w2"] }));
    const out = s.handleStimulus(t.updateGraph("c", { y: t.task(["x"]) }, ["y"]));
    expect(t.computeTasks(out)).toMatchObject([
      { worker: "w2", msg: { key: "y", whoHas: new Map([["x", ["w2"]]]) } },
    ]);
    s.handleStimulus(t.taskFinished("w2", "y", s.tasks.get("y")?.runId ?? -1));
    expect(s.tasks.get("y")?.state).toBe("memory");
    s.validateState();
  });

  test("a key the scheduler has is rejected; the scatter's copies are freed where the task has no business", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w3"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    const a = s.tasks.get("a");
    s.handleStimulus(t.taskFinished(a?.processingOn?.address ?? "", "a", a?.runId ?? -1));
    const holder = [...(a?.whoHas ?? [])][0].address;
    const runner = s.tasks.get("b")?.processingOn?.address;
    const out = s.handleStimulus(t.updateData("c", { a: ["w1", "w2", "w3"] }));
    expect(answer(out)?.rejected).toEqual([
      { key: "a", reason: "the scheduler already has a task 'a' (memory)", workersGone: false },
    ]);
    const freed = t.summarize(out).filter((line) => line.includes("free-keys"));
    const expected = ["w1", "w2", "w3"]
      .filter((w) => w !== holder && w !== runner)
      .map((w) => `${w} free-keys a`);
    expect(freed).toEqual(expected);
    expect(a?.state).toBe("memory");
    expect(a?.whoHas.size).toBe(1);
    s.validateState();
  });

  test("a worker that left is not a holder; a key with no worker left is rejected", () => {
    const s = state();
    const out = s.handleStimulus(t.updateData("c", { x: ["w1", "gone"], y: ["gone", "left"] }));
    expect(answer(out)?.rejected).toEqual([
      {
        key: "y",
        reason: "none of its workers is connected any more (gone, left)",
        workersGone: true,
      },
    ]);
    expect(t.summarize(out)).toEqual(["client:c key-in-memory x", "client:c data-updated"]);
    expect([...(s.tasks.get("x")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1"]);
    expect(s.tasks.has("y")).toBe(false);
    s.validateState();
  });

  test("losing the last holder cancels the key for its clients and its dependents", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1"] }));
    s.handleStimulus(t.registerWorker("w3", 1, { R: 1 }));
    // y needs a resource only w3 has, and x's data is on w1: y is processing on w3.
    s.handleStimulus(t.updateGraph("c", { y: t.task(["x"], { resources: { R: 1 } }) }, ["y"]));
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w3");
    const out = s.handleStimulus(t.removeWorker("w1"));
    const cancelled = out
      .map(({ msg }) => msg)
      .filter((msg) => msg.op === "cancelled-keys")
      .map((msg) => (msg.op === "cancelled-keys" ? [msg.keys, msg.reason] : null));
    expect(cancelled).toEqual([
      [["x"], SCATTERED_DATA_LOST],
      [["y"], "lost dependencies: a task it needs was lost"],
    ]);
    expect(t.summarize(out)).toContain("w3 free-keys y");
    expect(t.summarize(out).some((line) => line.includes("lost-data"))).toBe(false);
    expect(s.tasks.size).toBe(0);
    expect(s.clients.get("c")?.wantsWhat.size).toBe(0);
    s.validateState();
  });

  test("an input whose last dependent is cancelled by the loss is forgotten, not computed for nobody", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1"] }));
    const tasks = {
      a: t.task([], { workers: ["w1"] }),
      l: t.task(["a"], { workers: ["w2"] }),
      y: t.task(["l", "x"]),
    };
    s.handleStimulus(t.updateGraph("c", tasks, ["y"]));
    s.handleStimulus(t.taskFinished("w1", "a", s.tasks.get("a")?.runId ?? -1));
    expect(s.tasks.get("l")?.processingOn?.address).toBe("w2");
    // Losing w1 loses x (y, and so l's only dependent, is cancelled) and a (l's input,
    // which sends l back to waiting): l must be forgotten all the same.
    const out = s.handleStimulus(t.removeWorker("w1"));
    expect(t.summarize(out)).toContain("w2 free-keys l");
    expect([...s.tasks.keys()]).toEqual([]);
    s.validateState();
  });

  test("losing one of two holders keeps the key", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1", "w2"] }));
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "x" }));
    expect(out).toEqual([]);
    expect(s.tasks.get("x")?.state).toBe("memory");
    s.validateState();
  });

  test("a worker named twice holds one replica, and counts once in the replicas kept", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1", "w1"], y: ["w1", "w2", "w2"] }));
    const x = s.tasks.get("x");
    expect(x?.whoHas.size).toBe(1);
    expect(x?.replicasWanted ?? 0).toBe(0); // on one worker: one replica, as any key
    expect(s.tasks.get("y")?.replicasWanted).toBe(2);
    expect(s.workers.get("w1")?.nbytes).toBe(200);
    // A copy w2 fetched is not one the client asked for: the next round drops one.
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["x"] }));
    const out = s.handleStimulus({ kind: "reduce-replicas", stimulusId: "amm" });
    expect(t.summarize(out)).toEqual(["w1 remove-replicas x"]); // ties by address
    expect(s.tasks.get("x")?.whoHas.size).toBe(1);
    expect(s.tasks.get("y")?.whoHas.size).toBe(2);
    s.validateState();
    // A key the scheduler has, scattered again to one worker twice, is freed there once.
    s.handleStimulus(t.releaseKeys("c", ["x"]));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { workers: ["w1"] }) }, ["x"]));
    const again = s.handleStimulus(t.updateData("c", { x: ["w2", "w2"] }));
    expect(t.summarize(again).filter((line) => line.includes("free-keys"))).toEqual([
      "w2 free-keys x",
    ]);
    s.validateState();
  });

  test("released by its client, scattered data is forgotten and freed; wanted by another, it stays", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w2"] }));
    s.handleStimulus(t.fromClient({ op: "client-desires-keys", keys: ["y"], clientId: "d" }));
    const out = s.handleStimulus(t.releaseKeys("c", ["x", "y"]));
    expect(t.summarize(out)).toEqual(["w1 free-keys x"]);
    expect(s.tasks.has("x")).toBe(false);
    expect(s.tasks.get("y")?.state).toBe("memory");
    s.validateState();
  });

  test("released while a task that needs it is in memory: forgotten, the task keeps its result", () => {
    const s = state();
    s.handleStimulus(t.updateData("c", { x: ["w1"] }));
    s.handleStimulus(t.updateGraph("c", { y: t.task(["x"]) }, ["y"]));
    s.handleStimulus(t.taskFinished("w1", "y", s.tasks.get("y")?.runId ?? -1));
    const out = s.handleStimulus(t.releaseKeys("c", ["x"]));
    expect(t.summarize(out)).toEqual(["w1 free-keys x"]);
    expect(s.tasks.get("y")).toMatchObject({ state: "memory", hasLostDependencies: true });
    s.validateState();
  });

  test("a size that is not a whole number of bytes below 2^53: InvalidStimulus, saying so", () => {
    for (const nbytes of [
      1e300,
      2 ** 53,
      1.5,
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "8",
      null,
    ]) {
      const s = state();
      const keys = [{ key: "x", workers: ["w1"], nbytes, typename: "int" }];
      const ev = t.fromClient({ op: "update-data", keys, clientId: "c" }) as SchedulerEvent;
      expect(() => s.handleStimulus(ev), String(nbytes)).toThrow(
        /keys\[0\]\.nbytes must be an integer from 0 to 2\^53 - 1, got /,
      );
      expect(s.tasks.size).toBe(0);
      expect([...s.workers.values()].map((ws) => ws.nbytes)).toEqual([0, 0]);
    }
    // The largest size accepted, and the totals go back to 0 when it is freed.
    const s = state();
    const keys = [{ key: "x", workers: ["w1"], nbytes: 2 ** 53 - 1, typename: "int" }];
    s.handleStimulus(t.fromClient({ op: "update-data", keys, clientId: "c" }) as SchedulerEvent);
    expect(s.workers.get("w1")?.nbytes).toBe(2 ** 53 - 1);
    s.handleStimulus(t.releaseKeys("c", ["x"]));
    expect(s.workers.get("w1")?.nbytes).toBe(0);
    s.validateState();
  });

  const malformed: [string, unknown][] = [
    ["keys not an array", { x: ["w1"] }],
    ["an entry without a key", [{ workers: ["w1"], nbytes: 1, typename: "int" }]],
    ["a key twice", [1, 2].map(() => ({ key: "x", workers: ["w1"], nbytes: 1, typename: "int" }))],
    ["no workers", [{ key: "x", workers: [], nbytes: 1, typename: "int" }]],
    ["a negative size", [{ key: "x", workers: ["w1"], nbytes: -1, typename: "int" }]],
    ["no type name", [{ key: "x", workers: ["w1"], nbytes: 1 }]],
  ];
  for (const [name, keys] of malformed) {
    test(`${name}: InvalidStimulus, nothing changes`, () => {
      const s = state();
      const ev = t.fromClient({ op: "update-data", keys, clientId: "c" }) as SchedulerEvent;
      expect(() => s.handleStimulus(ev)).toThrow(InvalidStimulus);
      expect(s.tasks.size).toBe(0);
      expect(s.clients.size).toBe(0);
    });
  }
});
