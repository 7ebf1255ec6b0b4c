import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { ACTOR_STAYS } from "./replicate.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** Keys of these sizes scattered on `w1` (three workers, the others empty). */
function state(sizes: Record<string, number> = { a: 500, b: 300, c: 100 }): SchedulerState {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
  s.handleStimulus({
    kind: "client-message",
    msg: {
      op: "update-data",
      keys: Object.entries(sizes).map(([key, nbytes]) => ({
        key,
        workers: ["w1"],
        nbytes,
        typename: "Buffer",
      })),
      clientId: "c",
      stimulusId: "scatter",
    },
  });
  return s;
}

const rebalance = (
  fields: { keys?: string[]; workers?: string[] } = {},
  stimulusId = "rb",
): SchedulerEvent => ({
  kind: "client-message",
  msg: { op: "rebalance", ...fields, clientId: "c", stimulusId },
});

const addKeys = (worker: string, ...keys: string[]): SchedulerEvent =>
  t.fromWorker(worker, { op: "add-keys", keys });

function answer(out: readonly SchedulerMessage[]) {
  const found = out.find(({ msg }) => msg.op === "rebalanced");
  return found?.msg.op === "rebalanced" ? found.msg : undefined;
}

function acquires(out: readonly SchedulerMessage[]): string[] {
  return out.flatMap(({ to, msg }) =>
    to.kind === "worker" && msg.op === "acquire-replicas"
      ? [`${to.address} ${[...msg.whoHas].map(([k, h]) => `${k}<${h.join("+")}`).join(" ")}`]
      : [],
  );
}

function held(s: SchedulerState): Record<string, number> {
  const out: Record<string, number> = {};
  for (const ws of s.workers.values()) out[ws.address] = ws.nbytes;
  return out;
}

describe("rebalance", () => {
  test("moves the largest keys that fit from the fullest worker to the emptiest, copy first", () => {
    const s = state();
    // Mean 300. a (500) would leave w2 fuller than w1: it stays. b goes to w2, c to w3.
    const out = s.handleStimulus(rebalance());
    expect(acquires(out)).toEqual(["w2 b<w1", "w3 c<w1"]);
    expect(answer(out)).toBeUndefined();
    s.validateState();
    // Nothing is dropped before its copy arrived.
    expect(held(s)).toEqual({ w1: 900, w2: 0, w3: 0 });
    const first = s.handleStimulus(addKeys("w2", "b"));
    expect(t.summarize(first)).toEqual(["w1 remove-replicas b"]);
    expect(first[0].msg.op === "remove-replicas" && first[0].msg.stimulusId).toBe("rb");
    expect(held(s)).toEqual({ w1: 600, w2: 300, w3: 0 });
    s.validateState();
    const done = s.handleStimulus(addKeys("w3", "c"));
    expect(t.summarize(done)).toEqual(["w1 remove-replicas c", "client:c rebalanced"]);
    expect(answer(done)).toEqual({ op: "rebalanced", failed: [], moved: 2, stimulusId: "rb" });
    expect(held(s)).toEqual({ w1: 500, w2: 300, w3: 100 });
    // The workers' releases that follow are stale.
    s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "b" }));
    expect(s.tasks.get("b")?.state).toBe("memory");
    s.validateState();
    // Balanced as far as it goes: a second call moves nothing.
    expect(t.summarize(s.handleStimulus(rebalance({}, "rb2")))).toEqual(["client:c rebalanced"]);
  });

  test("only the keys named move; those not in memory fail; workers= limits the workers", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { z: t.task() }, ["z"]));
    const out = s.handleStimulus(rebalance({ keys: ["c", "z", "nope"] }));
    expect(acquires(out)).toEqual(["w2 c<w1"]);
    s.handleStimulus(addKeys("w2", "c"));
    const limited = state();
    const some = limited.handleStimulus(rebalance({ workers: ["w1", "w3"] }));
    // Mean 450: w3 takes b, then c (w3 400, w1 500); a would leave w3 the fuller.
    expect(acquires(some)).toEqual(["w3 b<w1 c<w1"]);
    const lone = state();
    const one = lone.handleStimulus(rebalance({ workers: ["w1"] }));
    expect(answer(one)).toEqual({ op: "rebalanced", failed: [], moved: 0, stimulusId: "rb" });
    const none = lone.handleStimulus(rebalance({ keys: ["a"], workers: ["elsewhere"] }, "rb3"));
    expect(answer(none)?.failed).toEqual([
      { key: "a", reason: "none of the workers elsewhere is running" },
    ]);
    const failed = s.handleStimulus(rebalance({ keys: ["z", "nope"] }, "rb4"));
    expect(answer(failed)?.failed).toEqual([
      { key: "z", reason: "it is processing, not in memory" },
      { key: "nope", reason: "the scheduler does not know it, not in memory" },
    ]);
    s.validateState();
  });

  test("a move whose recipient leaves, or whose key is released, fails: the sender keeps its copy", () => {
    const s = state();
    s.handleStimulus(rebalance());
    const gone = s.handleStimulus(t.removeWorker("w2"));
    expect(answer(gone)).toBeUndefined(); // c's copy is still on its way
    const released = s.handleStimulus(t.releaseKeys("c", ["c"]));
    expect(answer(released)).toEqual({
      op: "rebalanced",
      failed: [
        { key: "b", reason: "w2 left before it had a copy" },
        { key: "c", reason: "its result was released or lost meanwhile" },
      ],
      moved: 0,
      stimulusId: "rb",
    });
    expect([...(s.tasks.get("b")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1"]);
    s.validateState();
  });

  test("a client that leaves gets no answer, but its moves are made", () => {
    const s = state();
    // Another client wants b and c too: they outlive c's close.
    s.handleStimulus(t.fromClient({ op: "client-desires-keys", keys: ["b", "c"], clientId: "d" }));
    s.handleStimulus(rebalance());
    s.handleStimulus(t.fromClient({ op: "close-client", clientId: "c" }));
    s.validateState();
    const out = s.handleStimulus(addKeys("w2", "b"), addKeys("w3", "c"));
    expect(t.summarize(out)).toEqual(["w1 remove-replicas b", "w1 remove-replicas c"]);
    expect(s.replications.size).toBe(0);
    s.validateState();
  });

  test("an actor never moves: passed over, or failed when named", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { act: t.task([], { actor: true, workers: ["w1"] }) }, ["act"]),
    );
    s.handleStimulus(t.taskFinished("w1", "act", 1, 400));
    // Mean 433: a goes to w2; act (400) would go to w3, but stays; b and c go instead.
    const out = s.handleStimulus(rebalance());
    expect(acquires(out)).toEqual(["w2 a<w1", "w3 b<w1 c<w1"]);
    s.handleStimulus(addKeys("w2", "a"), addKeys("w3", "b", "c"));
    const named = s.handleStimulus(rebalance({ keys: ["act"] }, "rb2"));
    expect(t.summarize(named)).toEqual(["client:c rebalanced"]);
    expect(answer(named)).toEqual({
      op: "rebalanced",
      failed: [{ key: "act", reason: ACTOR_STAYS }],
      moved: 0,
      stimulusId: "rb2",
    });
    expect([...(s.tasks.get("act")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1"]);
    s.validateState();
  });

  test("a sender running a task that needs a key keeps it", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { z: t.task(["b"], { workers: ["w1"] }) }, ["z"]));
    // b stays with z's worker: c and then nothing else fits.
    expect(acquires(s.handleStimulus(rebalance()))).toEqual(["w2 c<w1"]);
    // A task needing the key starts on the sender while its copy is on the way: the
    // copy stays too, and the move does not count.
    const s2 = state();
    s2.handleStimulus(rebalance());
    s2.handleStimulus(t.updateGraph("c", { z: t.task(["b"], { workers: ["w1"] }) }, ["z"]));
    const arrived = s2.handleStimulus(addKeys("w2", "b"), addKeys("w3", "c"));
    expect(t.summarize(arrived)).toEqual(["w1 remove-replicas c", "client:c rebalanced"]);
    expect(answer(arrived)?.moved).toBe(1);
    expect([...(s2.tasks.get("b")?.whoHas ?? [])].map((ws) => ws.address)).toEqual(["w1", "w2"]);
    s2.validateState();
  });

  const malformed: [string, Record<string, unknown>][] = [
    ["keys not an array", { keys: "x" }],
    ["workers empty", { workers: [] }],
  ];
  for (const [name, fields] of malformed) {
    test(`${name}: InvalidStimulus`, () => {
      const s = state();
      const ev = t.fromClient({ op: "rebalance", clientId: "c", ...fields }) as SchedulerEvent;
      expect(() => s.handleStimulus(ev)).toThrow(InvalidStimulus);
      expect(s.replications.size).toBe(0);
    });
  }

  test("workers with memory limits: sender-min, recipient-max and the gap, as Dask's defaults", () => {
    /** Three workers with limits of 10,000 bytes, holding these keys. */
    const limited = (keys: Record<string, [string, number]>) => {
      const s = new SchedulerState({ validate: true });
      for (const w of ["w1", "w2", "w3"]) {
        s.handleStimulus(
          t.fromWorker(w, {
            op: "register-worker",
            address: w,
            nthreads: 1,
            resources: {},
            memoryLimit: 10_000,
          }),
        );
      }
      for (const [key, [worker, nbytes]] of Object.entries(keys)) {
        s.handleStimulus(t.updateData("c", { [key]: [worker] }, key, nbytes));
      }
      return s;
    };
    // w1 holds 2,000: above the mean, but under 30% of its limit: nothing moves.
    const low = limited({ a: ["w1", 1000], b: ["w1", 1000] });
    expect(answer(low.handleStimulus(rebalance()))).toMatchObject({ moved: 0, failed: [] });
    // The same without limits moves a key.
    const free = state({ a: 1000, b: 1000 });
    expect(acquires(free.handleStimulus(rebalance()))).toHaveLength(1);
    // w1 holds 9,000 and w2 6,500: both above the mean (5,167) by more than the gap
    // (500). w3 is the only recipient: w2 is at recipient-max (60%) anyway.
    const high = limited({
      a: ["w1", 3000],
      b: ["w1", 3000],
      c: ["w1", 3000],
      d: ["w2", 3500],
      e: ["w2", 3000],
    });
    const out = high.handleStimulus(rebalance());
    expect(acquires(out)).toEqual(["w3 a<w1"]);
    // Within the gap of the mean, nobody moves.
    const near = limited({ a: ["w1", 3400], b: ["w2", 3000], c: ["w3", 2700] });
    expect(answer(near.handleStimulus(rebalance()))).toMatchObject({ moved: 0 });
    high.validateState();
  });
});
