import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { ACTOR_STAYS } from "./replicate.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** Three workers; x on w1 alone, y on w1 and w2, big (500 bytes) on w2. */
const state = t.threeWorkersWithData;

function acquires(out: readonly SchedulerMessage[]): string[] {
  return out.flatMap(({ to, msg }) =>
    to.kind === "worker" && msg.op === "acquire-replicas"
      ? [`${to.address} ${[...msg.whoHas].map(([k, h]) => `${k}<${h.join("+")}`).join(" ")}`]
      : [],
  );
}

function answer(out: readonly SchedulerMessage[]) {
  const found = out.find(({ msg }) => msg.op === "replicated");
  return found?.msg.op === "replicated" ? found.msg : undefined;
}

const addKeys = (worker: string, ...keys: string[]): SchedulerEvent =>
  t.fromWorker(worker, { op: "add-keys", keys });

describe("replicate", () => {
  test("asks the least loaded workers without a copy to fetch one, and answers once they have", () => {
    const s = state();
    const out = s.handleStimulus(t.replicate("c", ["x", "y"], { n: 2 }, "r1"));
    // w3 holds nothing, w1 200 bytes, w2 600: x goes to w3; y (on w1, w2) has its 2.
    expect(acquires(out)).toEqual(["w3 x<w1"]);
    expect(answer(out)).toBeUndefined();
    expect(s.replications.size).toBe(1);
    s.validateState();
    const done = s.handleStimulus(addKeys("w3", "x"));
    expect(answer(done)).toEqual({ op: "replicated", failed: [], stimulusId: "r1" });
    expect([...(s.tasks.get("x")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1", "w3"]);
    expect(s.replications.size).toBe(0);
    s.validateState();
  });

  test("without n, every allowed worker gets a copy; workers= limits them", () => {
    const s = state();
    expect(acquires(s.handleStimulus(t.replicate("c", ["x"])))).toEqual(["w3 x<w1", "w2 x<w1"]);
    const s2 = state();
    expect(acquires(s2.handleStimulus(t.replicate("c", ["x"], { workers: ["w2"] })))).toEqual([
      "w2 x<w1",
    ]);
  });

  test("nothing to do, or keys not in memory: answered at once", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { z: t.task() }, ["z"]));
    const out = s.handleStimulus(t.replicate("c", ["y", "z", "nope"], { n: 2 }, "r2"));
    expect(acquires(out)).toEqual([]);
    expect(answer(out)?.failed).toEqual([
      { key: "z", reason: "it is processing, not in memory" },
      { key: "nope", reason: "the scheduler does not know it, not in memory" },
    ]);
    const none = s.handleStimulus(t.replicate("c", ["x"], { workers: ["elsewhere"] }));
    expect(answer(none)?.failed).toEqual([
      { key: "x", reason: "none of the workers elsewhere is running" },
    ]);
    expect(s.replications.size).toBe(0);
  });

  test("a target that leaves, or cannot fetch, fails its copy", () => {
    const s = state();
    const failed = s.handleStimulus(t.replicate("c", ["x"], { workers: ["w2"] }, "r0"));
    expect(acquires(failed)).toEqual(["w2 x<w1"]);
    const erred = s.handleStimulus(t.fetchErred("w2", "x", -1, "SerializationError: bad frame"));
    expect(answer(erred)?.failed).toEqual([
      { key: "x", reason: "w2 could not fetch it: SerializationError: bad frame" },
    ]);
    expect(t.summarize(erred)).toContain("w2 free-keys x"); // its erred copy
    s.validateState();
    s.handleStimulus(t.replicate("c", ["x", "big"], { n: 3 }, "r3"));
    const left = s.handleStimulus(t.removeWorker("w3"));
    expect(answer(left)).toBeUndefined(); // w2 still fetches x
    const out = s.handleStimulus(t.fetchErred("w2", "x", -1, "SerializationError: bad frame"));
    expect(answer(out)).toBeUndefined(); // w1 still fetches big
    const done = s.handleStimulus(addKeys("w1", "big"));
    expect(answer(done)?.failed).toEqual([
      { key: "x", reason: "w3 left before it had a copy" },
      { key: "big", reason: "w3 left before it had a copy" },
    ]);
    s.validateState();
  });

  test("a key released or lost meanwhile fails; a client that left gets no answer", () => {
    const s = state();
    s.handleStimulus(t.replicate("c", ["x"], { n: 2 }, "r4"));
    const out = s.handleStimulus(t.releaseKeys("c", ["x"]));
    expect(answer(out)?.failed).toEqual([
      { key: "x", reason: "its result was released or lost meanwhile" },
    ]);
    s.handleStimulus(t.replicate("c", ["y"], { n: 3 }, "r5"));
    const closed = s.handleStimulus(t.fromClient({ op: "close-client", clientId: "c" }));
    expect(answer(closed)).toBeUndefined();
    expect(s.replications.size).toBe(0);
    // The copy arriving later is of a forgotten key: dropped.
    const late = s.handleStimulus(addKeys("w3", "y"));
    expect(t.summarize(late)).toEqual(["w3 remove-replicas y"]);
    s.validateState();
  });

  test("copies beyond n on allowed workers are dropped from the busiest, without waiting", () => {
    const s = state();
    s.handleStimulus(t.replicate("c", ["x"], { n: 3 }, "r6"));
    s.handleStimulus(addKeys("w2", "x"), addKeys("w3", "x"));
    const holders = (key: string) =>
      [...(s.tasks.get(key)?.whoHas ?? [])].map((ws) => ws.address).sort();
    expect(holders("x")).toEqual(["w1", "w2", "w3"]);
    // w2 holds big (500 bytes), w1 x and y: w2, then w1, are the busiest.
    const out = s.handleStimulus(t.replicate("c", ["x", "y"], { n: 1 }, "r7"));
    expect(t.summarize(out)).toEqual([
      "w2 remove-replicas x,y",
      "w1 remove-replicas x",
      "client:c replicated",
    ]);
    expect(answer(out)?.failed).toEqual([]);
    expect(holders("x")).toEqual(["w3"]);
    expect(holders("y")).toEqual(["w1"]);
    s.validateState();
    // The workers' releases that follow are stale: the copies left stay.
    s.handleStimulus(t.fromWorker("w2", { op: "release-worker-data", key: "x" }));
    s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "x" }));
    expect(s.tasks.get("x")?.state).toBe("memory");
    expect(holders("x")).toEqual(["w3"]);
    s.validateState();
  });

  test("only copies on allowed workers count or go", () => {
    const s = state();
    // y is on w1 and w2; with workers=[w1, w3], w1's copy is the only one that counts.
    const out = s.handleStimulus(t.replicate("c", ["y"], { n: 1, workers: ["w1", "w3"] }));
    expect(t.summarize(out)).toEqual(["client:c replicated"]);
    const two = s.handleStimulus(t.replicate("c", ["y"], { n: 5, workers: ["w1", "w3"] }));
    expect(acquires(two)).toEqual(["w3 y<w1+w2"]); // n is at most the allowed workers
  });

  test("an actor is neither copied nor trimmed: it is answered as failed", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { actor: true, workers: ["w3"] }) }, ["a"]),
    );
    s.handleStimulus(t.taskFinished("w3", "a", 1));
    // w1 fetched a handle to it, as the input of a task of its own.
    s.handleStimulus(addKeys("w1", "a"));
    for (const n of [undefined, 1]) {
      const out = s.handleStimulus(t.replicate("c", ["a"], n === undefined ? {} : { n }, "ra"));
      // Every worker would get a copy, or one of the two would go: neither happens.
      expect(t.summarize(out)).toEqual(["client:c replicated"]);
      expect(answer(out)).toEqual({
        op: "replicated",
        failed: [{ key: "a", reason: ACTOR_STAYS }],
        stimulusId: "ra",
      });
    }
    expect([...(s.tasks.get("a")?.whoHas ?? [])].map((ws) => ws.address).sort()).toEqual([
      "w1",
      "w3",
    ]);
    expect(s.replications.size).toBe(0);
    s.validateState();
  });

  test("a worker running a task that needs the key keeps its copy", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { z: t.task(["y"], { workers: ["w1"] }) }, ["z"]));
    expect(s.tasks.get("z")?.processingOn?.address).toBe("w1");
    const out = s.handleStimulus(t.replicate("c", ["y"], { n: 1 }, "r8"));
    // w2 is the busier, and goes; with n=1 and only w1 left, nothing more.
    expect(t.summarize(out)).toEqual(["w2 remove-replicas y", "client:c replicated"]);
    s.handleStimulus(t.replicate("c", ["y"], { n: 2 }));
    s.handleStimulus(addKeys("w3", "y"));
    // Now y is on w1 (running z) and w3; w1 is the busier but keeps its copy.
    const kept = s.handleStimulus(t.replicate("c", ["y"], { n: 1 }));
    expect(t.summarize(kept)).toEqual(["w3 remove-replicas y", "client:c replicated"]);
    const none = s.handleStimulus(t.replicate("c", ["y"], { n: 1, workers: ["w1"] }));
    expect(t.summarize(none)).toEqual(["client:c replicated"]);
    s.validateState();
  });

  const malformed: [string, Record<string, unknown>][] = [
    ["keys not an array", { keys: "x" }],
    ["n zero", { keys: ["x"], n: 0 }],
    ["n not an integer", { keys: ["x"], n: 1.5 }],
    ["workers empty", { keys: ["x"], workers: [] }],
  ];
  for (const [name, fields] of malformed) {
    test(`${name}: InvalidStimulus`, () => {
      const s = state();
      const ev = t.fromClient({ op: "replicate", clientId: "c", ...fields }) as SchedulerEvent;
      expect(() => s.handleStimulus(ev)).toThrow(InvalidStimulus);
      expect(s.replications.size).toBe(0);
    });
  }
});

describe("a copy whose key is lost while on its way", () => {
  test("its worker is told to stop fetching it (free-keys), before the key may be computed there", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const out = s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const [{ worker, msg }] = t.computeTasks(out);
    s.handleStimulus(t.taskFinished(worker, "x", msg.runId));
    const other = worker === "w1" ? "w2" : "w1";
    expect(t.summarize(s.handleStimulus(t.replicate("c", ["x"])))).toEqual([
      `${other} acquire-replicas`,
    ]);
    // The only holder dies before the copy arrives: x is computed again, here on the
    // worker still fetching it, which must drop that fetch first.
    const lost = s.handleStimulus(t.removeWorker(worker));
    const said = t.summarize(lost);
    expect(said).toContain(`${other} free-keys x`);
    expect(said).toContain(`${other} compute-task x`);
    expect(said.indexOf(`${other} free-keys x`)).toBeLessThan(
      said.indexOf(`${other} compute-task x`),
    );
  });
});
