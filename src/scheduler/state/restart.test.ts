import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import type { SchedulerEvent } from "./events.ts";
import { RESTART_REASON } from "./restart.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

const restart = (clientId = "c", stimulusId = "rs"): SchedulerEvent =>
  t.fromClient({ op: "restart", clientId }, stimulusId);

function messages(out: readonly SchedulerMessage[], op: string) {
  return out.filter(({ msg }) => msg.op === op);
}

describe("restart", () => {
  test("forgets every task, cancels every client's keys, closes and removes every worker", () => {
    const s = t.threeWorkersWithData();
    s.handleStimulus(t.updateGraph("c", { z: t.task(["x"]) }, ["z"]));
    s.handleStimulus(t.updateGraph("d", { w: t.task(["y"]) }, ["w"]));
    expect(s.tasks.get("z")?.state).toBe("processing");
    const out = s.handleStimulus(restart());
    expect(s.tasks.size).toBe(0);
    expect(s.workers.size).toBe(0);
    expect(s.running.size).toBe(0);
    expect(s.totalNthreads).toBe(0);
    expect(s.taskGroups.size).toBe(0);
    const closes = messages(out, "close-worker");
    expect(closes.map(({ to }) => (to.kind === "worker" ? to.address : ""))).toEqual([
      "w1",
      "w2",
      "w3",
    ]);
    for (const { msg } of closes) {
      expect(msg).toEqual({
        op: "close-worker",
        reason: "restart",
        restart: true,
        stimulusId: "rs",
      });
    }
    // The leaving workers are not told of each other.
    expect(messages(out, "remove-worker")).toEqual([]);
    const cancelled = messages(out, "cancelled-keys").map(({ to, msg }) => ({ to, msg }));
    expect(cancelled).toEqual([
      {
        to: { kind: "client", id: "c" },
        msg: {
          op: "cancelled-keys",
          keys: ["x", "y", "big", "z"],
          reason: RESTART_REASON,
          stimulusId: "rs",
          submission: 0,
        },
      },
      {
        to: { kind: "client", id: "d" },
        msg: {
          op: "cancelled-keys",
          keys: ["w"],
          reason: RESTART_REASON,
          stimulusId: "rs",
          submission: 0,
        },
      },
    ]);
    // The answer comes last, after the requester's own cancelled keys.
    expect(out.at(-1)).toEqual({
      to: { kind: "client", id: "c" },
      msg: { op: "restarted", workers: ["w1", "w2", "w3"], nannies: [], stimulusId: "rs" },
    });
    // Tasks are forgotten while the workers are there to be told.
    expect(t.summarize(out).filter((m) => m.includes("free-keys")).length).toBeGreaterThan(0);
    s.validateState();
  });

  test("keeps what it learnt of task durations, for the tasks after it (Dask forgets them)", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { fn: "slow" }) }, ["x"]));
    s.handleStimulus(
      t.fromWorker("w1", {
        op: "task-finished",
        key: "x",
        runId: 1,
        nbytes: 8,
        typename: "number",
        startstops: [{ action: "compute", start: 10, stop: 13 }],
      }),
    );
    s.handleStimulus(restart());
    expect(s.durations.get("slow")).toBe(3);
    s.handleStimulus(t.registerWorker("w2"));
    const out = s.handleStimulus(t.updateGraph("c", { y: t.task([], { fn: "slow" }) }, ["y"]));
    expect(t.computeTasks(out)[0].msg.duration).toBe(3);
    s.validateState();
  });

  test("names the workers with a nanny; those registering afterwards get new tasks", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("n1", 1, {}, undefined, { nanny: true }));
    s.handleStimulus(t.registerWorker("w2"));
    const out = s.handleStimulus(restart("c"));
    expect(messages(out, "restarted")[0]?.msg).toMatchObject({
      workers: ["n1", "w2"],
      nannies: ["n1"],
    });
    // The nanny's new worker may even take the old address.
    s.handleStimulus(t.registerWorker("n1", 1, {}, undefined, { nanny: true }));
    const later = s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    const sent = t.computeTasks(later);
    expect(sent.map((c) => c.worker)).toEqual(["n1"]);
    // A message of the old worker arriving late is stale.
    s.handleStimulus(t.taskFinished("w2", "a", sent[0]?.msg.runId ?? 0));
    expect(s.tasks.get("a")?.state).toBe("processing");
    s.validateState();
  });

  test("an idle cluster, or none at all, restarts; the requester is answered", () => {
    const s = new SchedulerState({ validate: true });
    expect(s.handleStimulus(restart("c"))).toEqual([
      {
        to: { kind: "client", id: "c" },
        msg: { op: "restarted", workers: [], nannies: [], stimulusId: "rs" },
      },
    ]);
    s.validateState();
  });

  test("drops published datasets and fire-and-forget keys, and ends retirements under way", () => {
    const s = t.threeWorkersWithData();
    s.handleStimulus(
      t.fromClient({ op: "publish-dataset", name: "ds", keys: ["x"], data: null, clientId: "c" }),
    );
    s.handleStimulus(t.updateGraph("c", { slow: t.task() }, ["slow"]));
    s.handleStimulus(t.fromClient({ op: "fire-and-forget", keys: ["slow"], clientId: "c" }));
    s.handleStimulus(t.fromClient({ op: "retire-workers", workers: ["w1"], clientId: "e" }, "rt"));
    expect(s.retirements.size).toBe(1);
    const out = s.handleStimulus(restart());
    expect(s.datasets.size).toBe(0);
    expect(s.retirements.size).toBe(0);
    expect([...s.clients.keys()].sort()).toEqual(["c", "e"]);
    expect(messages(out, "workers-retired")[0]?.msg).toEqual({
      op: "workers-retired",
      retired: [],
      failed: [{ worker: "w1", reason: RESTART_REASON }],
      stimulusId: "rt",
    });
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("a client wanting nothing is not told of keys; malformed restarts are rejected", () => {
    const s = t.threeWorkersWithData();
    const out = s.handleStimulus(restart("other"));
    // c lost its scattered keys; "other" wanted nothing: only its answer.
    expect(messages(out, "cancelled-keys").map(({ to }) => to)).toEqual([
      { kind: "client", id: "c" },
    ]);
    expect(() =>
      s.handleStimulus({ kind: "client-message", msg: { op: "restart", clientId: "c" } } as never),
    ).toThrow(/stimulusId/);
    expect(() =>
      s.handleStimulus(t.fromClient({ op: "restart", clientId: "fire-and-forget" })),
    ).toThrow(/reserved/);
  });

  test("register-worker's nanny must be a boolean", () => {
    const s = new SchedulerState();
    expect(() =>
      s.handleStimulus(t.registerWorker("n1", 1, {}, undefined, { nanny: "yes" as never })),
    ).toThrow(/nanny must be a boolean/);
  });

  test("restart-workers closes the named workers with a nanny; the rest goes on", () => {
    const s = new SchedulerState({ validate: true });
    const reg = (address: string, nanny: boolean) =>
      t.registerWorker(address, 1, {}, undefined, { nanny });
    s.handleStimulus(reg("n1", true), reg("n2", true), reg("w3", false));
    const g = s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { workers: ["n1"], allowOtherWorkers: true }) }, ["a"]),
    );
    expect(t.computeTasks(g).map((x) => x.worker)).toEqual(["n1"]);
    // n2 holds what no other worker does: its retirement waits for a copy.
    s.handleStimulus(t.updateData("c", { x: ["n2"] }));
    s.handleStimulus(t.fromClient({ op: "retire-workers", workers: ["n2"], clientId: "c" }, "rt"));
    const out = s.handleStimulus(
      t.fromClient(
        { op: "restart-workers", workers: ["n1", "n2", "w3", "nowhere"], clientId: "c" },
        "rw",
      ),
    );
    expect(messages(out, "workers-restarted")[0]?.msg).toEqual({
      op: "workers-restarted",
      restarted: ["n1"],
      failed: [
        { worker: "n2", reason: "it is being retired" },
        { worker: "w3", reason: "it has no nanny to start it again" },
        { worker: "nowhere", reason: "no connected worker matches it" },
      ],
      remaining: 2,
      stimulusId: "rw",
    });
    expect(messages(out, "close-worker").map(({ to, msg }) => [to, msg])).toEqual([
      [
        { kind: "worker", address: "n1" },
        { op: "close-worker", reason: "restart", restart: true, stimulusId: "rw" },
      ],
    ]);
    // Its task runs elsewhere, without counting against it; the other workers hear of it.
    expect(t.computeTasks(out).map((x) => x.worker)).toEqual(["w3"]);
    expect(s.tasks.get("a")?.suspicious).toBe(0);
    expect(t.summarize(out)).toContain("w3 remove-worker n1");
    expect(() =>
      s.handleStimulus(t.fromClient({ op: "restart-workers", workers: [], clientId: "c" })),
    ).toThrow(/workers must be a non-empty array/);
    s.validateState();
  });
});
