/**
 * The replicate ledger's checks of the copies a request drops, fed a real
 * scheduler's state and output, then output or state bent the way a broken
 * scheduler would bend them.
 */

import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../protocol/messages.ts";
import type { RebalanceMsg, ReplicateMsg, RetireWorkersMsg } from "../protocol/messagesClient.ts";
import { removeReplica } from "../scheduler/state/bookkeeping.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import { SchedulerState } from "../scheduler/state/schedulerState.ts";
import * as t from "../scheduler/state/testing.ts";
import { SimFailure } from "./failure.ts";
import { ReplicateLedger } from "./replicateLedger.ts";
import { emptyReplicateCounts } from "./stats.ts";

/** y on w1 and w2, z (needing y) processing on w1 when `running` is set; w3 holds nothing. */
function cluster(running = false): SchedulerState {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
  s.handleStimulus(t.updateData("c", { y: ["w1", "w2"] }));
  if (running)
    s.handleStimulus(t.updateGraph("c", { z: t.task(["y"], { workers: ["w1"] }) }, ["z"]));
  return s;
}

/**
 * The ledger's verdict on request `sent` when the scheduler handles `handled`
 * (the same request unless a test bends it), after `bend` changed the output.
 */
function verdict(
  s: SchedulerState,
  sent: ReplicateMsg,
  handled: ReplicateMsg = sent,
  bend: (out: SchedulerMessage[]) => SchedulerMessage[] = (out) => out,
): { dropped: number; error: string | null } {
  const counts = emptyReplicateCounts();
  const ledger = new ReplicateLedger(counts, s);
  ledger.sent(sent);
  const ev = { kind: "client-message", msg: handled } as const;
  const out = bend([...s.handleStimulus(ev)]);
  try {
    ledger.afterSchedulerStimulus(ev, out);
  } catch (e) {
    if (!(e instanceof SimFailure)) throw e;
    expect(e.kind).toBe("lost");
    return { dropped: counts.copiesDropped, error: e.message };
  }
  return { dropped: counts.copiesDropped, error: null };
}

const request = (n: number, stimulusId = "r1"): ReplicateMsg => ({
  op: "replicate",
  keys: ["y"],
  n,
  clientId: "c",
  stimulusId,
});

const drop = (to: string, stimulusId = "r1"): SchedulerMessage => ({
  to: { kind: "worker", address: to },
  msg: { op: "remove-replicas", keys: ["y"], stimulusId },
});

/** The message of the run's failure `f` throws, or "nothing thrown". */
function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof SimFailure) return e.message;
    throw e;
  }
  return "nothing thrown";
}

describe("the replicate ledger's check of dropped copies", () => {
  test("the scheduler's own drops pass", () => {
    expect(verdict(cluster(), request(1))).toEqual({ dropped: 1, error: null });
    // w1 runs z, which needs y: only w2 can go, and goes.
    expect(verdict(cluster(true), request(1))).toEqual({ dropped: 1, error: null });
  });

  test("a copy left beyond n fails the run", () => {
    // The scheduler handles the request as if it asked for two copies: it drops none.
    const { error } = verdict(cluster(), request(1), request(2));
    expect(error).toBe(
      "replicate r1 of y (n=1, held by w1, w2 of the 3 allowed running workers) dropped the copies on none: " +
        "2 left, more than 1 and only 0 run a task that needs it",
    );
  });

  test("a drop the scheduler did not note fails the run", () => {
    const { error } = verdict(cluster(), request(1), request(1), (out) => [...out, drop("w1")]);
    expect(error).toMatch(/dropped the copies on w2, w1: the scheduler still lists w1$/);
  });

  test("too many drops, or one from a worker running a task that needs the key, fail the run", () => {
    const s = cluster(true);
    const w1 = s.workers.get("w1");
    const y = s.tasks.get("y");
    if (w1 === undefined || y === undefined) throw new Error("no w1 or y");
    const bend = (out: SchedulerMessage[]): SchedulerMessage[] => {
      removeReplica(s, y, w1); // the scheduler forgets the copy z needs, and asks w1 to drop it
      return [...out, drop("w1")];
    };
    const { error } = verdict(s, request(1), request(1), bend);
    expect(error).toMatch(/dropped the copies on w2, w1: w1 runs a task that needs it$/);
    const quiet = cluster();
    const { error: under } = verdict(quiet, request(1), request(1), (out) => {
      const w = quiet.workers.get("w1");
      const key = quiet.tasks.get("y");
      if (w !== undefined && key !== undefined) removeReplica(quiet, key, w);
      return [...out, drop("w1")];
    });
    expect(under).toMatch(/dropped the copies on w2, w1: 0 left, fewer than 1$/);
  });

  test("a drop of a key the request does not name, or on a worker it does not allow, fails the run", () => {
    const other = (out: SchedulerMessage[]): SchedulerMessage[] => [
      ...out,
      {
        to: { kind: "worker", address: "w3" },
        msg: { op: "remove-replicas", keys: ["q"], stimulusId: "r1" },
      },
    ];
    expect(verdict(cluster(), request(1), request(1), other).error).toBe(
      "replicate r1 asked w3 to drop its copy of q, which it does not name",
    );
    const limited: ReplicateMsg = { ...request(1), workers: ["w2", "w3"] };
    expect(verdict(cluster(), limited, limited, (out) => [...out, drop("w1")]).error).toBe(
      "replicate r1 asked w1 to drop its copy of y, a worker it does not allow",
    );
  });
});

describe("the replicate ledger's check of rebalance moves", () => {
  /** a (300) and b (200) on w1, c (50) on w2; w3 empty: mean 183. */
  function unbalanced(): SchedulerState {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
    const scatter = (key: string, worker: string, nbytes: number) =>
      s.handleStimulus({
        kind: "client-message",
        msg: {
          op: "update-data",
          keys: [{ key, workers: [worker], nbytes, typename: "Buffer" }],
          clientId: "c",
          stimulusId: `scatter-${key}`,
        },
      });
    scatter("a", "w1", 300);
    scatter("b", "w1", 200);
    scatter("c", "w2", 50);
    return s;
  }

  const rebalance: RebalanceMsg = { op: "rebalance", clientId: "c", stimulusId: "rb" };

  /** Feed `ev` to the scheduler and the ledger, with `bend` applied to the output the ledger sees. */
  function step(
    s: SchedulerState,
    ledger: ReplicateLedger,
    ev: SchedulerEvent,
    bend: (out: SchedulerMessage[]) => SchedulerMessage[] = (out) => out,
  ): SchedulerMessage[] {
    const out = bend([...s.handleStimulus(ev)]);
    ledger.afterSchedulerStimulus(ev, out);
    return out;
  }

  const addKeys = (worker: string, key: string): SchedulerEvent =>
    t.fromWorker(worker, { op: "add-keys", keys: [key] });

  test("the scheduler's own moves pass, and its answer counts them", () => {
    const s = unbalanced();
    const counts = emptyReplicateCounts();
    const ledger = new ReplicateLedger(counts, s);
    ledger.sent(rebalance);
    const out = step(s, ledger, { kind: "client-message", msg: rebalance });
    expect(t.summarize(out)).toEqual(["w3 acquire-replicas"]); // b goes to w3
    const done = step(s, ledger, addKeys("w3", "b"));
    expect(t.summarize(done)).toEqual(["w1 remove-replicas b", "client:c rebalanced"]);
    const answer = done[1].msg;
    if (answer.op !== "rebalanced") throw new Error("no answer");
    expect(thrown(() => ledger.answerSent(answer))).toBe("nothing thrown");
    expect(counts.moves).toBe(1);
    expect(counts.rebalances).toBe(1);
    expect(thrown(() => ledger.answerSent(answer))).toBe(
      "the scheduler's rebalanced (rb) answers its request a second time",
    );
  });

  test("a drop before the copy arrived, from the taker, or a miscounted answer, fails the run", () => {
    const early = unbalanced();
    const l1 = new ReplicateLedger(emptyReplicateCounts(), early);
    l1.sent(rebalance);
    const dropA = (to: string, key: string): SchedulerMessage => ({
      to: { kind: "worker", address: to },
      msg: { op: "remove-replicas", keys: [key], stimulusId: "rb" },
    });
    expect(
      thrown(() =>
        step(early, l1, { kind: "client-message", msg: rebalance }, (out) => [
          ...out,
          dropA("w1", "b"),
        ]),
      ),
    ).toBe("rebalance rb asked w1 to drop b before any copy arrived");

    const taker = unbalanced();
    const l2 = new ReplicateLedger(emptyReplicateCounts(), taker);
    l2.sent(rebalance);
    step(taker, l2, { kind: "client-message", msg: rebalance });
    expect(
      thrown(() => step(taker, l2, addKeys("w3", "b"), (out) => [...out, dropA("w3", "b")])),
    ).toBe("rebalance rb asked w3 to drop b: a worker that did not hold it");

    const miscount = unbalanced();
    const l3 = new ReplicateLedger(emptyReplicateCounts(), miscount);
    l3.sent(rebalance);
    step(miscount, l3, { kind: "client-message", msg: rebalance });
    const done = step(miscount, l3, addKeys("w3", "b"));
    const answer = done[1].msg;
    if (answer.op !== "rebalanced") throw new Error("no answer");
    expect(thrown(() => l3.answerSent({ ...answer, moved: 2 }))).toBe(
      "the scheduler's rebalanced (rb) says it made 2 moves, not 1",
    );
  });
});

describe("the replicate ledger's check of retirements", () => {
  const retireMsg: RetireWorkersMsg = {
    op: "retire-workers",
    workers: ["w1"],
    clientId: "c",
    stimulusId: "rt",
  };

  test("the scheduler's own retirement passes; a close it did not make, or a misreported answer, fails", () => {
    const s = cluster();
    const ledger = new ReplicateLedger(emptyReplicateCounts(), s);
    ledger.sentRetire(retireMsg);
    const ev = { kind: "client-message", msg: retireMsg } as const;
    ledger.beforeSchedulerStimulus();
    const out = [...s.handleStimulus(ev)];
    // y is on w2 too: w1 is retired at once.
    expect(t.summarize(out)[0]).toBe("w1 pause");
    ledger.afterSchedulerStimulus(ev, out);
    const answer = out.find((m) => m.msg.op === "workers-retired")?.msg;
    if (answer?.op !== "workers-retired") throw new Error("no answer");
    expect(thrown(() => ledger.retiredSent({ ...answer, retired: [] }))).toBe(
      "the scheduler's workers-retired (rt) says it retired [], but closed [w1]",
    );
    const stray: SchedulerMessage = {
      to: { kind: "worker", address: "w2" },
      msg: { op: "close-worker", reason: "retired", stimulusId: "nobody" },
    };
    expect(thrown(() => ledger.afterSchedulerStimulus(ev, [stray]))).toBe(
      "the scheduler retired w2 (nobody) for no retire-workers of the client",
    );
  });

  test("a retirement's close-worker fails while the scheduler still lists the worker, or actors lived on it", () => {
    const listed = cluster();
    const l1 = new ReplicateLedger(emptyReplicateCounts(), listed);
    l1.sentRetire(retireMsg);
    const ev = { kind: "client-message", msg: retireMsg } as const;
    l1.beforeSchedulerStimulus();
    const out = [...listed.handleStimulus(ev)];
    const closeW2: SchedulerMessage = {
      to: { kind: "worker", address: "w2" },
      msg: { op: "close-worker", reason: "retired", stimulusId: "rt" },
    };
    expect(thrown(() => l1.afterSchedulerStimulus(ev, [...out, closeW2]))).toBe(
      "the scheduler retired w2 (rt) but still lists it",
    );

    // y an actor living on w1 as the stimulus came (set by hand, then unset).
    const acted = cluster();
    const l2 = new ReplicateLedger(emptyReplicateCounts(), acted);
    l2.sentRetire(retireMsg);
    const w1 = acted.workers.get("w1");
    const y = acted.tasks.get("y");
    if (w1 === undefined || y === undefined) throw new Error("no w1, or no y");
    w1.actors.add(y);
    l2.beforeSchedulerStimulus();
    w1.actors.delete(y);
    const out2 = [...acted.handleStimulus(ev)];
    expect(thrown(() => l2.afterSchedulerStimulus(ev, out2))).toBe(
      "the scheduler retired w1 (rt) while actors ran or lived on it (y)",
    );
  });

  test("a retirement that leaves a result it alone held to be computed again fails", () => {
    // z (computed on w1, to which it is pinned, and needed by the wanted q) is on w1 alone.
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        { z: t.task([], { workers: ["w1"] }), q: t.task(["z"], { workers: ["w2"] }) },
        ["q"],
      ),
    );
    s.handleStimulus(t.taskFinished("w1", "z", s.tasks.get("z")?.runId ?? 0, 10));
    const ledger = new ReplicateLedger(emptyReplicateCounts(), s);
    ledger.sentRetire(retireMsg);
    ledger.beforeSchedulerStimulus();
    // A broken scheduler: it closes and removes w1 without a copy of z.
    const ev = t.removeWorker("w1", true);
    const out = [...s.handleStimulus(ev)];
    const close: SchedulerMessage = {
      to: { kind: "worker", address: "w1" },
      msg: { op: "close-worker", reason: "retired", stimulusId: "rt" },
    };
    expect(thrown(() => ledger.afterSchedulerStimulus(ev, [...out, close]))).toBe(
      "the scheduler retired w1 (rt) while it held the only copy of z, now no-worker to be computed again",
    );
  });
});
