/**
 * WorkerState as a whole: which peers to gather from and how much, the limits on
 * incoming transfers, execution order and resources, the data store, diagnostics and
 * errors. Ported in good part from Dask's `test_worker_state_machine.py`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../util/pyErrors.ts";
import { InvalidTaskState, InvalidTransition, TransitionCounterMaxExceeded } from "./errors.ts";
import {
  AcquireReplicasEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  type GatherDepSuccessEvent,
  PauseEvent,
  RemoveReplicasEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "./events.ts";
import {
  AddKeysMsg,
  deepEqual,
  Execute,
  GatherDep,
  type Instruction,
  RequestRefreshWhoHasMsg,
  RetryBusyWorkerLater,
  TaskErredMsg,
  TaskFinishedMsg,
} from "./instructions.ts";
import { SerializedTask } from "./taskState.ts";
import {
  ADDR,
  acquire,
  compute,
  FailingStore,
  failure,
  free,
  gatherDep,
  gathered,
  isTransitionRecord,
  newWs,
  ofClass,
  secede,
  story,
  success,
  W2,
  W3,
  wsWithRunningTask,
} from "./testing.ts";
import { WorkerState } from "./workerState.ts";

const byState = (ws: WorkerState) => {
  const out: Record<string, string[]> = {};
  for (const ts of ws.tasks.values()) (out[ts.state] ??= []).push(ts.key);
  return out;
};

const DONE_EVENTS = [
  [
    "ExecuteSuccessEvent",
    (key: string, stimulusId: string) => ExecuteSuccessEvent.dummy(key, { stimulusId }),
  ],
  [
    "ExecuteFailureEvent",
    (key: string, stimulusId: string) => ExecuteFailureEvent.dummy(key, { stimulusId }),
  ],
  [
    "RescheduleEvent",
    (key: string, stimulusId: string) => RescheduleEvent.dummy(key, { stimulusId }),
  ],
] as const;

describe("gather: batching and peer selection", () => {
  describe.each([1, 2])("%i remote worker(s)", (nRemote) => {
    it.each([
      [10e6, 3],
      [20e6, 2],
      [30e6, 1],
      [60e6, 1],
    ])(
      "tasks of %d bytes: %i per GatherDep, up to transfer_message_bytes_limit",
      (nbytes, perWorker) => {
        const ws = newWs({ transferMessageBytesLimit: 50e6 });
        const peers = Array.from({ length: nRemote }, (_, i) => `127.0.0.1:${2 + i}`);
        const whoHas: Record<string, string[]> = {};
        const sizes: Record<string, number> = {};
        for (let i = 0; i < 3 * nRemote; i++) {
          whoHas[`x${i}`] = [peers[Math.floor(i / 3)]];
          sizes[`x${i}`] = nbytes;
        }
        const instructions = ws.handleStimulus(
          new AcquireReplicasEvent({ whoHas, nbytes: sizes, stimulusId: "s1" }),
        ) as GatherDep[];
        expect(instructions.map((i) => [i.cls, i.worker, i.stimulusId])).toEqual(
          peers.map((p) => ["GatherDep", p, "s1"]),
        );
        for (const inst of instructions) expect(inst.toGather.size).toBe(perWorker);
        expect(ws.inFlightTasks.size).toBe(perWorker * nRemote);
        expect(ws.transferIncomingBytes).toBe(nbytes * perWorker * nRemote);
        expect(ws.transferIncomingCount).toBe(nRemote);
        expect(ws.transferIncomingCountTotal).toBe(nRemote);
        ws.validateState();
      },
    );
  });

  it("gathers by priority, then from local peers, then from peers with more tasks, then at random", () => {
    const ws = newWs({ transferIncomingCountLimit: 4 });
    const mib4 = 4 * 2 ** 20;
    const instructions = ws.handleStimulus(
      new PauseEvent({ stimulusId: "pause" }),
      // Tasks fetched by acquire-replicas have priority [1].
      new AcquireReplicasEvent({
        whoHas: {
          x1: ["127.0.0.2:1", "127.0.0.1:2"], // remote and local
          x2: ["127.0.0.2:1"], // after x1 is gathered from .1, .2 has fewer tasks than .3
          x3: ["127.0.0.3:1"],
          x4: ["127.0.0.3:1"],
          x5: ["127.0.0.4:1"], // a random choice among .2, .4, .5 and .6
          x6: ["127.0.0.5:1"],
          x7: ["127.0.0.6:1"],
          x8: ["127.0.0.7:1"], // fetched first, because it is on the same peer as y
        },
        // Large enough that the count limit is not lifted by the throttle threshold.
        nbytes: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`x${i + 1}`, mib4])),
        stimulusId: "compute1",
      }),
      // A higher-priority task, even if it comes later, is fetched first.
      compute("z", "compute2", { whoHas: { y: ["127.0.0.7:1"] }, priority: [0] }),
      new UnpauseEvent({ stimulusId: "unpause" }),
    );
    expect(instructions).toEqual([
      // Lower-priority tasks from the same peer share the message.
      gatherDep("127.0.0.7:1", ["y", "x8"], 1 + mib4, "unpause"),
      gatherDep("127.0.0.1:2", ["x1"], mib4, "unpause"),
      gatherDep("127.0.0.3:1", ["x3", "x4"], 2 * mib4, "unpause"),
      // Deterministic: the random tie-break is seeded (CPython's Random(0)).
      gatherDep("127.0.0.4:1", ["x5"], mib4, "unpause"),
    ]);
    expect(ws.transferIncomingBytes).toBe(1 + 5 * mib4);
    expect(ws.transferIncomingCount).toBe(4);
    expect(ws.transferIncomingCountTotal).toBe(4);
    ws.validateState();
  });

  it("fetches at once from a new replica while all known holders are in flight", () => {
    const ws = newWs();
    const instructions = ws.handleStimulus(
      acquire("x", [W2], "s1"),
      acquire("y", [W2], "s2"),
      acquire("y", [W2, W3], "s3"),
    );
    expect(instructions).toEqual([gatherDep(W2, ["x"], 1, "s1"), gatherDep(W3, ["y"], 1, "s3")]);
    expect([ws.task("x").state, ws.task("y").state]).toEqual(["flight", "flight"]);
    ws.validateState();
  });

  it.each([false, true])("does not contact a peer that lost its replica (as_deps=%s)", (asDeps) => {
    const ws = newWs();
    ws.handleStimulus(new PauseEvent({ stimulusId: "p" }));
    if (asDeps) ws.handleStimulus(compute("y1", "s1", { whoHas: { x: [W2, W3] } }));
    else ws.handleStimulus(acquire("x", [W2, W3], "s1"));
    expect(ws.task("x").whoHas).toEqual(new Set([W2, W3]));
    // W2 died; the scheduler mentions x again with its new who_has.
    if (asDeps) ws.handleStimulus(compute("y2", "s2", { whoHas: { x: [W3] } }));
    else ws.handleStimulus(acquire("x", [W3], "s2"));
    expect(ws.task("x").whoHas).toEqual(new Set([W3]));
    expect(ws.dataNeeded.get(W2)?.size ?? 0).toBe(0);

    expect(ws.handleStimulus(new UnpauseEvent({ stimulusId: "u" }))).toEqual([
      gatherDep(W3, ["x"], 1, "u"),
    ]);
    ws.validateState();
  });

  it("tries other replicas of busy peers, asks the scheduler when all are busy, retries later", () => {
    const ws = newWs();
    const [first] = ws.handleStimulus(acquire("x", [W2, W3], "s1")) as GatherDep[];
    const other = first.worker === W2 ? W3 : W2;
    const busy = (worker: string, stimulusId: string) =>
      ws.handleStimulus(new GatherDepBusyEvent({ worker, totalNbytes: 1, stimulusId }));

    expect(busy(first.worker, "b1")).toEqual([
      new RetryBusyWorkerLater(first.worker, "b1"),
      gatherDep(other, ["x"], 1, "b1"),
    ]);
    expect(busy(other, "b2")).toEqual([
      new RetryBusyWorkerLater(other, "b2"),
      new RequestRefreshWhoHasMsg(["x"], "b2"),
    ]);
    expect(ws.task("x").state).toBe("fetch");
    // The shell waits, then:
    expect(
      ws.handleStimulus(new RetryBusyWorkerEvent({ worker: first.worker, stimulusId: "r" })),
    ).toEqual([gatherDep(first.worker, ["x"], 1, "r")]);
    expect(ws.busyWorkers).toEqual(new Set([other]));
    ws.validateState();
  });
});

describe("throttling of incoming transfers", () => {
  const limits = (
    ws: WorkerState,
    o: { count: number; bytes: number; threshold: number; message?: number },
  ) => {
    ws.transferIncomingCountLimit = o.count;
    ws.transferIncomingBytesLimit = o.bytes;
    ws.transferIncomingBytesThrottleThreshold = o.threshold;
    if (o.message !== undefined) ws.transferMessageBytesLimit = o.message;
  };

  it("gathers a task that exactly fills what a limit allows (the seed compares with >)", () => {
    // test/vectors/oracle/scenario-message-limit-filled-exactly
    const message = newWs({ transferMessageBytesLimit: 100 });
    const one = message.handleStimulus(
      compute("y", "s1", { whoHas: { a: [W2], b: [W2] }, nbytes: { a: 50, b: 50 } }),
    );
    expect(one.filter((i) => i.cls === "GatherDep")).toEqual([
      new GatherDep(W2, new Set(["a", "b"]), 100, "s1"),
    ]);
    // test/vectors/oracle/scenario-incoming-bytes-limit-filled-exactly
    const incoming = newWs({ transferIncomingBytesLimit: 100 });
    const two = incoming.handleStimulus(
      compute("y", "s1", { whoHas: { a: [W2], b: [W3] }, nbytes: { a: 50, b: 50 } }),
    );
    expect(two.filter((i) => i.cls === "GatherDep")).toEqual([
      new GatherDep(W2, new Set(["a"]), 50, "s1"),
      new GatherDep(W3, new Set(["b"]), 50, "s1"),
    ]);
    expect(incoming.transferIncomingBytes).toBe(100);
    incoming.validateState();
  });

  it("by default, holds back by count only past 10 MB in flight, and then at 9,999 transfers", () => {
    const ws = new WorkerState({ address: ADDR, validate: true });
    expect([ws.transferIncomingCountLimit, ws.transferIncomingBytesThrottleThreshold]).toEqual([
      9999, 10_000_000,
    ]);
    // 12 peers of 2 MB each: past the threshold after five, all go at once.
    const whoHas: Record<string, string[]> = {};
    const nbytes: Record<string, number> = {};
    for (let i = 0; i < 12; i++) {
      whoHas[`d${i}`] = [`127.0.0.1:${i + 2}`];
      nbytes[`d${i}`] = 2_000_000;
    }
    ws.handleStimulus(compute("y", "s1", { whoHas, nbytes }));
    expect(ws.transferIncomingCount).toBe(12);
    // Below the threshold, even a count limit of 1 holds nothing back.
    const below = new WorkerState({ address: ADDR, transferIncomingCountLimit: 1 });
    below.handleStimulus(
      compute("y", "s1", { whoHas: { a: [W2], b: [W3] }, nbytes: { a: 2e6, b: 2e6 } }),
    );
    expect(below.transferIncomingCount).toBe(2);
  });

  it("does not hold back the first transfer, whatever its size", () => {
    const ws = newWs();
    limits(ws, { count: 100, bytes: 100, threshold: 1, message: 100 });
    ws.handleStimulus(compute("c", "s1", { whoHas: { a: [W2] }, nbytes: { a: 200 } }));
    expect(ws.task("a").state).toBe("flight");
    ws.validateState();
  });

  it("does not apply the message limit to the first task for another peer", () => {
    const ws = newWs();
    limits(ws, { count: 100, bytes: 600, threshold: 1, message: 100 });
    ws.handleStimulus(
      compute("c", "s1", { whoHas: { a: [W2], b: [W3] }, nbytes: { a: 200, b: 200 } }),
    );
    expect([ws.task("a").state, ws.task("b").state]).toEqual(["flight", "flight"]);
    ws.validateState();
  });

  it("throttles on the count limit once past the bytes threshold", () => {
    const ws = newWs();
    limits(ws, { count: 1, bytes: 100_000, threshold: 1 });
    const whoHas: Record<string, string[]> = { a: [W2], b: [W3] };
    ws.handleStimulus(compute("c", "s1", { whoHas, nbytes: { a: 100, b: 100 } }));
    const states = byState(ws);
    expect(states.flight).toHaveLength(1);
    expect(states.fetch).toHaveLength(1);
    expect(ws.transferIncomingBytes).toBe(100);

    const [inFlight] = states.flight;
    ws.handleStimulus(gathered(whoHas[inFlight][0], { [inFlight]: 123 }, "s2", 100));
    expect(ws.task(inFlight).state).toBe("memory");
    expect(ws.task(states.fetch[0]).state).toBe("flight");
    expect(ws.transferIncomingBytes).toBe(100);
    ws.validateState();
  });

  it("throttles on the bytes limit: one peer", () => {
    const ws = newWs();
    limits(ws, { count: 100, bytes: 250, threshold: 1 });
    ws.handleStimulus(
      compute("d", "s1", {
        whoHas: { a: [W2], b: [W2], c: [W2] },
        nbytes: { a: 100, b: 100, c: 100 },
      }),
    );
    const states = byState(ws);
    expect(ws.transferIncomingBytes).toBe(200);
    expect(states.flight).toHaveLength(2);
    expect(states.fetch).toHaveLength(1);

    ws.handleStimulus(
      gathered(W2, Object.fromEntries(states.flight.map((k) => [k, 123])), "s2", 200),
    );
    for (const k of states.flight) expect(ws.task(k).state).toBe("memory");
    expect(ws.task(states.fetch[0]).state).toBe("flight");
    ws.validateState();
  });

  it("throttles on the bytes limit: several peers", () => {
    const ws = newWs();
    limits(ws, { count: 100, bytes: 150, threshold: 1 });
    const whoHas: Record<string, string[]> = { a: [W2], b: [W3] };
    ws.handleStimulus(compute("c", "s1", { whoHas, nbytes: { a: 100, b: 100 } }));
    const states = byState(ws);
    expect(ws.transferIncomingBytes).toBe(100);
    expect(states.flight).toHaveLength(1);
    expect(states.fetch).toHaveLength(1);

    const [inFlight] = states.flight;
    ws.handleStimulus(gathered(whoHas[inFlight][0], { [inFlight]: 123 }, "s2", 100));
    expect(ws.task(inFlight).state).toBe("memory");
    expect(ws.task(states.fetch[0]).state).toBe("flight");
    ws.validateState();
  });

  it("ignores the count limit while below the bytes threshold", () => {
    const ws = newWs();
    limits(ws, { count: 1, bytes: 200, threshold: 50 });
    ws.handleStimulus(compute("b", "s1", { whoHas: { a: [W2] }, nbytes: { a: 1 } }));
    ws.handleStimulus(compute("d", "s2", { whoHas: { c: [W3] }, nbytes: { c: 1 } }));
    ws.handleStimulus(compute("f", "s3", { whoHas: { e: ["127.0.0.1:4"] }, nbytes: { e: 100 } }));
    expect([ws.task("a").state, ws.task("c").state, ws.task("e").state]).toEqual([
      "flight",
      "flight",
      "flight",
    ]);
    expect(ws.transferIncomingBytes).toBe(102);
    expect(ws.transferIncomingCount).toBe(3);
    ws.validateState();
  });

  it("throttles on the bytes limit regardless of the threshold", () => {
    const ws = newWs();
    limits(ws, { count: 1, bytes: 100, threshold: 50 });
    ws.handleStimulus(compute("b", "s1", { whoHas: { a: [W2] }, nbytes: { a: 1 } }));
    ws.handleStimulus(compute("d", "s2", { whoHas: { c: [W3] }, nbytes: { c: 100 } }));
    expect([ws.task("a").state, ws.task("c").state]).toEqual(["flight", "fetch"]);
    expect(ws.transferIncomingBytes).toBe(1);
    ws.validateState();
  });

  it("keeps the transfer metrics", () => {
    const ws = newWs();
    const metrics = () => [
      ws.transferIncomingBytes,
      ws.transferIncomingCount,
      ws.transferIncomingCountTotal,
    ];
    expect(metrics()).toEqual([0, 0, 0]);
    ws.handleStimulus(compute("b", "s1", { whoHas: { a: [W2] }, nbytes: { a: 7 } }));
    expect(metrics()).toEqual([7, 1, 1]);
    ws.handleStimulus(gathered(W2, { a: 123 }, "s2", 7));
    expect(metrics()).toEqual([0, 0, 1]);

    ws.handleStimulus(
      compute("e", "s3", { whoHas: { c: [W2], d: [W2] }, nbytes: { c: 11, d: 13 } }),
    );
    expect(metrics()).toEqual([24, 1, 2]);
    ws.handleStimulus(gathered(W2, { c: 123, d: 234 }, "s4", 24));
    expect(metrics()).toEqual([0, 0, 2]);

    ws.handleStimulus(
      compute("h", "s5", { whoHas: { f: [W2], g: [W3] }, nbytes: { f: 17, g: 19 } }),
    );
    expect(metrics()).toEqual([36, 2, 4]);
    ws.handleStimulus(gathered(W3, { g: 345 }, "s6", 19));
    expect(metrics()).toEqual([17, 1, 4]);
    ws.handleStimulus(gathered(W2, { f: 456 }, "s7", 17));
    expect(metrics()).toEqual([0, 0, 4]);
    ws.validateState();
  });

  it("keeps fetch_count", () => {
    const ws = newWs({ transferIncomingCountLimit: 0 });
    expect(ws.fetchCount).toBe(0);
    // released -> fetch -> flight
    ws.handleStimulus(acquire("a", [W2], "s1"), acquire("b", [W2, W3], "s2"));
    expect(ws.task("b").comingFrom).toBe(W3);
    expect(ws.fetchCount).toBe(0);

    // released -> fetch; d is in two data_needed heaps, and counts once
    ws.handleStimulus(
      new AcquireReplicasEvent({
        whoHas: { c: [W2], d: [W2, W3] },
        nbytes: { c: 1, d: 1 },
        stimulusId: "s3",
      }),
    );
    expect(ws.fetchCount).toBe(2);

    // fetch -> released
    ws.handleStimulus(free(["c", "d"], "s4"));
    expect(ws.fetchCount).toBe(0);

    // flight -> missing
    ws.handleStimulus(gathered(W2, {}, "s5", 0));
    expect(ws.task("a").state).toBe("missing");
    expect(ws.fetchCount).toBe(0);
    expect(ws.missingDepFlight.size).toBe(1);

    // flight -> fetch (W2 is in flight again)
    ws.handleStimulus(
      compute("clog", "s6", { whoHas: { clog_dep: [W2] }, priority: [-1] }),
      gathered(W3, {}, "s7", 0),
    );
    expect(ws.task("b").state).toBe("fetch");
    expect(ws.fetchCount).toBe(1);
    expect(ws.missingDepFlight.size).toBe(1);
    ws.validateState();
  });
});

describe("execution", () => {
  it("runs by priority; equal priorities last in, first out", () => {
    const ws = newWs();
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("a", "s1", { priority: [1] }),
      compute("b", "s2", { priority: [0] }),
      compute("c", "s3", { priority: [0] }),
    );
    expect(ws.handleStimulus(new UnpauseEvent({ stimulusId: "u" }))).toEqual([
      new Execute("c", "u"),
    ]);
    expect(ofClass(ws.handleStimulus(success("c", "s4")), "Execute")).toEqual([
      new Execute("b", "s4"),
    ]);
    expect(ofClass(ws.handleStimulus(success("b", "s5")), "Execute")).toEqual([
      new Execute("a", "s5"),
    ]);
    ws.validateState();
  });

  it("runs up to nthreads tasks at once", () => {
    const ws = newWs({ nthreads: 2 });
    const instructions = ws.handleStimulus(
      compute("a", "s1"),
      compute("b", "s2"),
      compute("c", "s3"),
    );
    expect(instructions).toEqual([new Execute("a", "s1"), new Execute("b", "s2")]);
    expect(ws.task("c").state).toBe("ready");
    expect(ws.executingCount).toBe(2);
    ws.validateState();
  });

  describe.each(["executing", "long-running"] as const)("a task %s", (state) => {
    it("holds its resources", () => {
      const ws = wsWithRunningTask(state);
      expect(ws.availableResources).toEqual(new Map([["R", 0]]));
      ws.validateState();
    });

    it.each(DONE_EVENTS)("gives them back on %s", (_name, done) => {
      const ws = wsWithRunningTask(state);
      ws.handleStimulus(done("x", "s1"));
      expect(ws.availableResources).toEqual(new Map([["R", 1]]));
      expect(ws.allRunningTasks.size).toBe(0);
      ws.validateState();
    });
  });

  it("a task with dependencies takes its resources when it runs", () => {
    const ws = newWs({ resources: { R: 1 } });
    ws.handleStimulus(compute("y", "s1", { whoHas: { x: [W2] }, resourceRestrictions: { R: 1 } }));
    expect([ws.task("x").state, ws.task("y").state]).toEqual(["flight", "waiting"]);
    expect(ws.availableResources.get("R")).toBe(1);
    expect(ws.handleStimulus(gathered(W2, { x: 123 }, "s2", 8))).toEqual([
      new AddKeysMsg(["x"], "s2"),
      new Execute("y", "s2"),
    ]);
    expect(ws.availableResources.get("R")).toBe(0);
    ws.validateState();
  });

  it("a constrained task of higher priority goes first, if its resources are free", () => {
    const ws = newWs({ resources: { R: 1 } });
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("r", "s1", { priority: [1] }),
      compute("c", "s2", { priority: [0], resourceRestrictions: { R: 1 } }),
    );
    expect([ws.task("r").state, ws.task("c").state]).toEqual(["ready", "constrained"]);
    expect(ws.handleStimulus(new UnpauseEvent({ stimulusId: "u" }))).toEqual([
      new Execute("c", "u"),
    ]);
    ws.validateState();
  });

  it("a constrained task waits for its resources; ready tasks don't", () => {
    const ws = newWs({ resources: { R: 1 }, nthreads: 2 });
    ws.handleStimulus(compute("h", "s1", { resourceRestrictions: { R: 1 } }));
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("c", "s2", { priority: [0], resourceRestrictions: { R: 1 } }),
      compute("r", "s3", { priority: [1] }),
    );
    expect(ws.handleStimulus(new UnpauseEvent({ stimulusId: "u" }))).toEqual([
      new Execute("r", "u"),
    ]);
    expect(ws.task("c").state).toBe("constrained");
    expect(ws.handleStimulus(success("h", "s4"))).toEqual([
      TaskFinishedMsg.match({ key: "h" }),
      new Execute("c", "s4"),
    ]);
    ws.validateState();
  });
});

describe("who_has updates", () => {
  it("whoHas becomes set(workers) minus this worker, whatever the old holders", () => {
    const peer = fc.constantFrom<string>(ADDR, W2, W3, "127.0.0.1:4", "127.0.0.1:5");
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom<string>(W2, W3, "127.0.0.1:4", "127.0.0.1:5"), {
          maxLength: 4,
        }),
        fc.array(peer, { maxLength: 10 }),
        (before, update) => {
          const ws = newWs();
          ws.handleStimulus(acquire("x", before.length > 0 ? before : [W2], "s1"));
          if (before.length === 0) ws.updateWhoHas(new Map([["x", []]]));
          ws.updateWhoHas(new Map([["x", update]]));
          const expected = new Set(update.filter((w) => w !== ADDR));
          expect([...ws.task("x").whoHas].sort()).toEqual([...expected].sort());
          for (const w of ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4", "127.0.0.1:5"]) {
            expect(ws.hasWhat.get(w)?.has("x") ?? false).toBe(expected.has(w));
          }
          ws.validateState();
        },
      ),
      { seed: 20261130, numRuns: 300 },
    );
  });
});

describe("data", () => {
  it("keeps nbytes", () => {
    const ws = wsWithRunningTask("executing");
    expect(ws.nbytes).toBe(0);
    // executing -> memory
    ws.handleStimulus(ExecuteSuccessEvent.dummy("x", { nbytes: 12, stimulusId: "s1" }));
    expect(ws.nbytes).toBe(12);
    // flight -> memory
    ws.handleStimulus(acquire("y", [W2], "s2", 13));
    expect(ws.nbytes).toBe(12);
    ws.handleStimulus(gathered(W2, { y: "foo" }, "s3", 13));
    expect(ws.nbytes).toBe(12 + 13);
    // released -> memory (scatter): the size is measured
    ws.handleStimulus(new UpdateDataEvent({ data: { z: "bar" }, stimulusId: "s4" }));
    const zSize = ws.sizeof("bar");
    expect(ws.task("z").nbytes).toBe(zSize);
    expect(ws.nbytes).toBe(12 + 13 + zSize);
    // actors
    ws.handleStimulus(
      compute("w", "s5", { actor: true }),
      ExecuteSuccessEvent.dummy("w", { nbytes: 14, stimulusId: "s6" }),
    );
    expect(ws.actors.has("w")).toBe(true);
    expect(ws.data.has("w")).toBe(false);
    expect(ws.nbytes).toBe(12 + 13 + zSize + 14);
    // memory -> released by FreeKeysEvent
    ws.handleStimulus(free(["z"], "s7"));
    expect(ws.nbytes).toBe(12 + 13 + 14);
    // memory -> released by RemoveReplicasEvent
    ws.handleStimulus(new RemoveReplicasEvent({ keys: ["x", "y", "w"], stimulusId: "s8" }));
    expect(ws.nbytes).toBe(0);
    expect(ws.actors.size).toBe(0);
    ws.validateState();
  });

  it("an actor's dependent runs on the actor held here; one fetched from a peer is stored in data", () => {
    const ws = newWs();
    ws.handleStimulus(compute("a", "s1", { actor: true }), success("a", "s2", "the actor"));
    expect(ws.handleStimulus(compute("b", "s3", { whoHas: { a: [ADDR] } }))).toEqual([
      Execute.match({ key: "b", stimulusId: "s3" }),
    ]);
    expect(ws.actors.get("a")).toBe("the actor");
    ws.validateState();
    // A peer's actor comes as a handle, stored as any fetched value.
    ws.handleStimulus(compute("c", "s4", { whoHas: { d: [W2] }, nbytes: { d: 5 } }));
    ws.handleStimulus(gathered(W2, { d: "a handle" }, "s5", 5));
    expect(ws.data.get("d")).toBe("a handle");
    expect(ws.actors.has("d")).toBe(false);
    expect(ws.task("c").state).toBe("ready");
    ws.validateState();
  });

  it("an actor asked of a worker that knows it as a dependency: the seed rejects its own state", () => {
    // compute-task puts the key in `actors` before the actor runs: in flight, the task
    // fails validation; and validate_state counts the size learnt for the dependency
    // in the expected nbytes. The seed does both (simulator seed 910607, fuzz seeds
    // 1908916520 and 1196409129; test/vectors/oracle/scenario-actor-of-fetched-input).
    // The fuzz generator does not send it (StimulusGenerator.seedHazardOfComputing).
    for (const validate of [true, false]) {
      const ws = newWs({ validate });
      ws.handleStimulus(compute("b", "s1", { whoHas: { a: [W2] }, nbytes: { a: 7 } }));
      ws.handleStimulus(free(["b"], "s2"));
      expect(ws.task("a").state).toBe("cancelled");
      if (validate) {
        expect(() => ws.handleStimulus(compute("a", "s3", { actor: true }))).toThrow(
          InvalidTaskState,
        );
        continue;
      }
      ws.handleStimulus(compute("a", "s3", { actor: true }));
      expect(ws.task("a").state).toBe("resumed");
      expect(ws.actors.has("a")).toBe(true);
      expect(ws.nbytes).toBe(0);
      expect(() => ws.validateState()).toThrow("nbytes=0; expected 7");
    }
  });

  it("compute-task on a task in memory sends task-finished again", () => {
    const ws = newWs();
    ws.handleStimulus(compute("x", "s1", { runId: 1 }), success("x", "s2"));
    expect(ws.handleStimulus(compute("x", "s3", { runId: 5 }))).toEqual([
      TaskFinishedMsg.match({ key: "x", runId: 5, stimulusId: "s3" }),
    ]);
    expect(ws.task("x").state).toBe("memory");
    expect(story(ws, "s3")).toEqual([["x", "compute-task", "memory"]]);
    ws.validateState();
  });

  it("a store that fails to take a result: the task errs with the store's error", () => {
    const ws = newWs({ data: new FailingStore((k) => k === "x") });
    ws.handleStimulus(compute("x", "s1", { runId: 3 }));
    expect(
      ws.handleStimulus(ExecuteSuccessEvent.dummy("x", { runId: 3, stimulusId: "s2" })),
    ).toEqual([
      TaskErredMsg.match({
        key: "x",
        runId: 3,
        exceptionText: "MemoryError: cannot store x",
        tracebackText: '  File "spill.py", line 1',
        stimulusId: "s2",
      }),
    ]);
    expect(ws.task("x").state).toBe("error");
    expect(ws.data.size).toBe(0);
    expect(ws.nbytes).toBe(0);
    expect(story(ws, "s2")).toEqual([
      ["x", "executing", "memory", "executing", { x: "error" }],
      ["x", "executing", "error", "error", {}],
    ]);
    ws.validateState();
  });

  it("a store that fails to take a transferred value", () => {
    const ws = newWs({ data: new FailingStore((k) => k === "x") });
    ws.handleStimulus(acquire("x", [W2], "s1"));
    expect(ws.handleStimulus(gathered(W2, { x: 1 }, "s2"))).toEqual([
      TaskErredMsg.match({ key: "x", runId: -1, exceptionText: "MemoryError: cannot store x" }),
    ]);
    expect(ws.task("x").state).toBe("error");
    ws.validateState();
  });

  it("converts the store's errors with the errorMessage option", () => {
    const ws = newWs({
      data: new FailingStore(() => true),
      errorMessage: (err) => ({
        status: "error",
        exception: "wrapped",
        traceback: null,
        exceptionText: `custom: ${(err as Error).message}`,
        tracebackText: "custom tb",
      }),
    });
    expect(ws.handleStimulus(new UpdateDataEvent({ data: { x: 1 }, stimulusId: "s1" }))).toEqual([
      TaskErredMsg.match({
        key: "x",
        exception: "wrapped",
        exceptionText: "custom: MemoryError: cannot store x",
        tracebackText: "custom tb",
      }),
    ]);
    ws.validateState();
  });

  it("converts a plain Error by default", () => {
    class BrokenStore extends Map<string, unknown> {
      override set(): this {
        throw new RangeError("disk full");
      }
    }
    const ws = newWs({ data: new BrokenStore() });
    ws.handleStimulus(compute("x", "s1"));
    const [msg] = ws.handleStimulus(success("x", "s2")) as TaskErredMsg[];
    expect(msg.cls).toBe("TaskErredMsg");
    expect(msg.exception).toBeInstanceOf(RangeError);
    expect(msg.exceptionText).toBe("RangeError: disk full");
    expect(msg.tracebackText).toMatch(/^\s+at /);
    ws.validateState();
  });

  it("a failed transfer leaves its dependents waiting (dask/distributed#6705)", () => {
    const ws = newWs();
    const instructions = ws.handleStimulus(
      compute("y", "s1", { whoHas: { x: [W2] } }),
      GatherDepFailureEvent.fromException(new Error("bad pickle"), {
        worker: W2,
        totalNbytes: 1,
        stimulusId: "s2",
      }),
    );
    expect(instructions).toEqual([
      gatherDep(W2, ["x"], 1, "s1"),
      TaskErredMsg.match({ key: "x", exceptionText: "Error: bad pickle", stimulusId: "s2" }),
    ]);
    expect(ws.task("x").state).toBe("error");
    expect(ws.task("y").state).toBe("waiting"); // not ready
    expect(ws.transferIncomingBytes).toBe(0);
    expect(ws.transferIncomingCount).toBe(0);
    expect(ws.transferIncomingCountTotal).toBe(1);
    // As in the seed: y waits for a task in error, which full validation rejects.
    expect(() => ws.validateState()).toThrow(AssertionError);
  });
});

describe("diagnostics", () => {
  it("story() and stimulusStory()", () => {
    let now = 100;
    const ws = newWs({ clock: () => now });
    ws.handleStimulus(compute("y", "s1", { whoHas: { x: [W2] } }));
    now = 101;
    ws.handleStimulus(gathered(W2, { x: "big value" }, "s2"), success("y", "s3", "result"));

    expect(story(ws, "x")).toEqual([
      ["x", "ensure-task-exists", "released"],
      ["x", "released", "fetch", "fetch", {}],
      ["gather-dependencies", W2, new Set(["x"])],
      ["x", "fetch", "flight", "flight", {}],
      ["x", "put-in-memory"],
      ["x", "flight", "memory", "memory", { y: "ready" }],
    ]);
    // Raw records end with the stimulus id and the time.
    const raw = ws.story("x");
    expect(raw[0].slice(-2)).toEqual(["s1", 100]);
    expect(raw[5].slice(-2)).toEqual(["s2", 101]);
    // By stimulus id; a TaskState works as a key.
    expect(story(ws, "s3")).toEqual([
      ["y", "put-in-memory"],
      ["y", "executing", "memory", "memory", {}],
    ]);
    expect(ws.story(ws.task("y"))).toEqual(ws.story("y"));
    expect(ws.story("x", "y").length).toBe(new Set([...ws.story("x"), ...ws.story("y")]).size);

    // The stimuli about a key: copies without the values.
    const stimuli = ws.stimulusStory("y", "x");
    expect(stimuli.map((ev) => [ev.cls, ev.stimulusId, ev.handled])).toEqual([
      ["ComputeTaskEvent", "s1", 100],
      ["ExecuteSuccessEvent", "s3", 101],
    ]);
    expect((stimuli[1] as ExecuteSuccessEvent).value).toBeNull();
    const logged = ws.stimulusLog.toArray();
    expect(logged.map((ev) => ev.cls)).toEqual([
      "ComputeTaskEvent",
      "GatherDepSuccessEvent",
      "ExecuteSuccessEvent",
    ]);
    expect([...(logged[1] as GatherDepSuccessEvent).data]).toEqual([["x", null]]);
    expect(ws.data.get("x")).toBe("big value");
    ws.validateState();
  });

  it("reads the clock once per handleStimulus call, for all its records, and around a store write", () => {
    let reads = 0;
    // The task counter has a clock of its own (monotonic), which defaults to this one.
    const ws = newWs({ clock: () => ++reads, monotonic: () => 0 });
    // y waits for x, fetched from a peer: several records, one stimulus, one read.
    ws.handleStimulus(compute("y", "s1", { whoHas: { x: [W2] } }));
    expect(reads).toBe(1);
    expect(new Set(ws.log.toArray().map((r) => r[r.length - 1]))).toEqual(new Set([1]));
    expect(ws.stimulusLog.toArray().map((ev) => ev.handled)).toEqual([1]);
    // A batch is one call; x's store write is timed with reads of its own.
    ws.handleStimulus(gathered(W2, { x: 1 }, "s2"), success("y", "s3"));
    expect(reads).toBe(2 + 2 * 2);
    expect(ws.stimulusLog.toArray().map((ev) => ev.handled)).toEqual([1, 2, 2]);
  });

  it("a compute-task given both a function and a run spec is refused, as the seed asserts", () => {
    const fields = {
      key: "x",
      runId: 1,
      whoHas: {},
      nbytes: {},
      priority: [0],
      duration: 1,
      resourceRestrictions: {},
      actor: false,
      annotations: {},
      spanId: null,
      stimulusId: "s1",
    };
    expect(
      () => new ComputeTaskEvent({ ...fields, runSpec: new SerializedTask("t"), function: "f" }),
    ).toThrow(AssertionError);
    expect(new ComputeTaskEvent({ ...fields, runSpec: null, function: "f" }).runSpec.fn).toBe("f");
  });

  it("the stimulus log drops the run spec of compute-task", () => {
    const ws = newWs();
    const ev = new ComputeTaskEvent({
      key: "x",
      runId: 1,
      whoHas: {},
      nbytes: {},
      priority: [0],
      duration: 1,
      runSpec: null,
      function: "blob",
      args: "blob",
      resourceRestrictions: {},
      actor: false,
      annotations: {},
      spanId: null,
      stimulusId: "s1",
    });
    ws.handleStimulus(ev);
    expect(ev.runSpec.fn).toBe("blob");
    expect(ws.task("x").runSpec?.fn).toBe("blob");
    const [logged] = ws.stimulusStory("x") as ComputeTaskEvent[];
    expect([logged.runSpec.task, logged.runSpec.fn, logged.runSpec.args]).toEqual([
      null,
      null,
      null,
    ]);
    ws.validateState();
  });

  it("bounds the logs: 100,000 transitions, 10,000 stimuli", () => {
    const ws = newWs();
    const n = 40_000;
    const data: Record<string, number> = {};
    for (let i = 0; i < n; i++) data[`k${i}`] = i;
    // 3 records per key: receive-from-scatter (all first), then put-in-memory and
    // released -> memory (last in, first out).
    ws.handleStimulus(new UpdateDataEvent({ data, stimulusId: "scatter" }));
    expect(ws.log.length).toBe(100_000);
    expect(ws.log.at(0)?.slice(0, 2)).toEqual(["k20000", "receive-from-scatter"]);
    expect(ws.log.at(99_999)?.slice(0, 4)).toEqual(["k0", "released", "memory", "memory"]);

    const pauses = Array.from(
      { length: 10_005 },
      (_, i) => new PauseEvent({ stimulusId: `p${i}` }),
    );
    ws.handleStimulus(...pauses);
    expect(ws.stimulusLog.length).toBe(10_000);
    expect(ws.stimulusLog.at(0)?.stimulusId).toBe("p5");
    expect(ws.stimulusLog.at(9_999)?.stimulusId).toBe("p10004");
    ws.validateState();
  });

  it("counts tasks and their time per prefix and state", () => {
    let now = 0;
    const ws = newWs({ clock: () => now });
    const counts = (byPrefix = true) =>
      Object.fromEntries(
        ws.taskCounter.currentCount(byPrefix).map((c) => [`${c.prefix}/${c.state}`, c.value]),
      );
    const elapsed = (byPrefix = true) =>
      Object.fromEntries(
        ws.taskCounter.cumulativeElapsed(byPrefix).map((c) => [`${c.prefix}/${c.state}`, c.value]),
      );
    expect(counts()).toEqual({});
    expect(elapsed()).toEqual({});

    ws.handleStimulus(
      compute("('y-123', 7)", "s1", { whoHas: { "('x-456', 8)": [W2] } }),
      new AcquireReplicasEvent({
        whoHas: { "('x-789', 0)": [W3], z: [W3] },
        nbytes: { "('x-789', 0)": 1, z: 1 },
        stimulusId: "s2",
      }),
    );
    expect(counts()).toEqual({ "x/flight": 2, "y/waiting": 1, "z/flight": 1 });
    expect(counts(false)).toEqual({ "/waiting": 1, "/flight": 3 });

    now = 0.1;
    // Transitory states (released, fetch, ...) accrue no time.
    let e = elapsed();
    expect(Object.keys(e).sort()).toEqual(["x/flight", "y/waiting", "z/flight"]);
    expect(e["x/flight"]).toBeCloseTo(0.2);
    expect(e["y/waiting"]).toBeCloseTo(0.1);
    expect(e["z/flight"]).toBeCloseTo(0.1);
    e = elapsed(false);
    expect(e["/flight"]).toBeCloseTo(0.3);
    expect(e["/waiting"]).toBeCloseTo(0.1);

    // Forgotten tasks leave current counts and stop accruing time.
    ws.handleStimulus(free(["('y-123', 7)"], "s3"));
    expect(counts()).toEqual({ "x/cancelled": 1, "x/flight": 1, "z/flight": 1 });
    now = 0.25;
    e = elapsed();
    expect(Object.keys(e)).toHaveLength(4);
    expect(e["x/flight"]).toBeCloseTo(0.35);
    expect(e["x/cancelled"]).toBeCloseTo(0.15);
    expect(e["y/waiting"]).toBeCloseTo(0.1);
    expect(e["z/flight"]).toBeCloseTo(0.25);
    ws.validateState();
  });

  it("notifies plugins of each transition of the table; a failing plugin is ignored", () => {
    const calls: string[][] = [];
    const errors: string[] = [];
    const ws = newWs({
      plugins: new Map([
        [
          "bad",
          {
            transition() {
              throw new Error("plugin bug");
            },
          },
        ],
        [
          "good",
          {
            transition: (key: string, start: string, finish: string) =>
              void calls.push([key, start, finish]),
          },
        ],
        ["no-hook", {}],
      ]),
      onPluginError: (name, err) => errors.push(`${name}: ${(err as Error).message}`),
    });
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("y", "s1", { whoHas: { x: [W2] } }),
    );
    expect(calls).toEqual([
      ["y", "released", "waiting"],
      ["x", "released", "fetch"],
    ]);
    calls.length = 0;
    // fetch -> waiting goes through released: the plugins see the two legs only.
    ws.handleStimulus(compute("x", "s2"));
    expect(calls).toEqual([
      ["x", "fetch", "released"],
      ["x", "released", "waiting"],
      ["x", "waiting", "ready"],
    ]);
    expect(errors).toHaveLength(5);
    expect(new Set(errors)).toEqual(new Set(["bad: plugin bug"]));
    expect(ws.task("x").state).toBe("ready");
    ws.validateState();
  });

  it("takes a transition_counter_max of 0 for no limit, as the seed does (`if self.transition_counter_max and ...`)", () => {
    // test/vectors/oracle/scenario-transition-counter-max-zero
    const ws = newWs({ transitionCounterMax: 0 });
    expect(ws.handleStimulus(compute("a", "s1"))).toEqual([new Execute("a", "s1")]);
    expect(ws.handleStimulus(success("a", "s2"))).toEqual([
      TaskFinishedMsg.match({ key: "a", stimulusId: "s2" }),
    ]);
    expect(ws.transitionCounter).toBe(4);
    ws.validateState();
  });

  it("raises TransitionCounterMaxExceeded, with the story", () => {
    const ws = newWs({ transitionCounterMax: 3 });
    let err: unknown;
    try {
      ws.handleStimulus(compute("x", "s1"));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TransitionCounterMaxExceeded);
    expect(err).toBeInstanceOf(InvalidTransition);
    const e = err as TransitionCounterMaxExceeded;
    // Raised before the third transition runs.
    expect([e.key, e.start, e.finish]).toEqual(["x", "ready", "executing"]);
    expect(ws.transitionCounter).toBe(3);
    expect(ws.task("x").state).toBe("ready");
    expect(e.story.filter(isTransitionRecord).map((r) => r.slice(1, 4))).toEqual([
      ["released", "waiting", "waiting"],
      ["waiting", "ready", "ready"],
    ]);
    expect(e.toEvent()[0]).toBe("transition-counter-max-exceeded");
    expect(e.toEvent()[1]).toMatchObject({ key: "x", start: "ready", finish: "executing" });
  });

  it("counts a transition through released twice", () => {
    const ws = newWs();
    ws.handleStimulus(compute("x", "s1"), failure("x", "s2"));
    expect(ws.transitionCounter).toBe(4);
    // error -> waiting = error -> released -> waiting; then waiting -> ready -> executing
    ws.handleStimulus(compute("x", "s3"));
    expect(ws.transitionCounter).toBe(4 + 3 + 2);
    ws.validateState();
  });

  it("raises InvalidTransition with the story, also through released", () => {
    const ws = newWs();
    ws.handleStimulus(compute("x", "s1"), success("x", "s2"));
    let err: unknown;
    try {
      // A task in memory can't secede: memory -> released -> long-running fails on
      // its second leg.
      ws.handleStimulus(secede("x", "s3"));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidTransition);
    expect(err).not.toBeInstanceOf(TransitionCounterMaxExceeded);
    const e = err as InvalidTransition;
    expect([e.key, e.start, e.finish]).toEqual(["x", "memory", "long-running"]);
    const cause = e.cause as InvalidTransition;
    expect(cause).toBeInstanceOf(InvalidTransition);
    expect([cause.start, cause.finish]).toEqual(["released", "long-running"]);
    expect(e.story.filter(isTransitionRecord).map((r) => r.slice(1, 4))).toContainEqual([
      "memory",
      "released",
      "released",
    ]);
    expect(e.message).toContain("x :: memory->long-running");
    expect(e.message).toContain("'x', 'memory', 'released', 'released'");
    expect(e.toEvent()).toEqual([
      "invalid-worker-transition",
      { key: "x", start: "memory", finish: "long-running", story: e.story },
    ]);
  });

  it("ExecuteSuccessEvent for a task in fetch: refused by validation, else memory via released", () => {
    const setup = (ws: WorkerState) =>
      ws.handleStimulus(
        new PauseEvent({ stimulusId: "p" }),
        compute("y", "s1", { whoHas: { x: [W2] } }),
      );

    // The seed's _execute_done_common asserts the task is running; no InvalidTransition.
    const ws = newWs();
    setup(ws);
    expect(() => ws.handleStimulus(success("x", "s2"))).toThrow(AssertionError);

    // Without validation, fetch -> memory goes through released: the value is stored,
    // silently (released -> memory is a scatter), and y becomes ready.
    const ws2 = newWs({ validate: false });
    setup(ws2);
    expect(ws2.handleStimulus(success("x", "s2"))).toEqual([]);
    expect(ws2.task("x").state).toBe("memory");
    expect(ws2.task("y").state).toBe("ready");
    expect(story(ws2, "s2").filter((r) => r.length === 5)).toEqual([
      ["x", "fetch", "released", "released", {}],
      ["x", "released", "memory", "memory", { y: "ready" }],
      ["x", "fetch", "memory", "memory", { y: "ready" }],
      ["y", "waiting", "ready", "ready", {}], // paused
    ]);
    ws2.validateState();
  });

  it("validateTask raises InvalidTaskState with the story", () => {
    const ws = newWs();
    ws.handleStimulus(compute("x", "s1"));
    const ts = ws.task("x");
    ws.executing.delete(ts); // corrupt the state
    let err: unknown;
    try {
      ws.validateTask(ts);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidTaskState);
    const e = err as InvalidTaskState;
    expect([e.key, e.state]).toEqual(["x", "executing"]);
    expect(e.story).toEqual(ws.story("x"));
    expect(e.message).toMatch(/^x :: executing/);
    expect(e.toEvent()[0]).toBe("invalid-worker-task-state");
    expect(() => ws.validateState()).toThrow();
    ws.executing.add(ts);
    ws.validateState();
  });

  it("validateTask catches a task in fetch missing from a holder's data_needed, and a released task marked done", () => {
    const ws = newWs();
    ws.handleStimulus(
      new PauseEvent({ stimulusId: "p" }),
      compute("y", "s1", { whoHas: { x: [W2, W3] } }),
    );
    const x = ws.task("x");
    expect(x.state).toBe("fetch");
    ws.validateTask(x);
    ws.dataNeededFor(W3).discard(x);
    expect(() => ws.validateTask(x)).toThrow(InvalidTaskState);

    // A released task (compute-task would start it at once: made as its handler makes it).
    const released = ws.ensureTaskExists("q", [0], "s2");
    expect(released.state).toBe("released");
    ws.validateTask(released);
    released.done = true;
    expect(() => ws.validateTask(released)).toThrow(InvalidTaskState);
  });

  it("a WorkerState without an address refuses stimuli", () => {
    const ws = newWs({ address: undefined });
    expect(() => ws.address).toThrow("address has not been set");
    ws.address = ADDR;
    expect(ws.handleStimulus(compute("x", "s1"))).toEqual([new Execute("x", "s1")]);
    ws.validateState();
  });

  it("instructions: partial matches", () => {
    const i: Instruction = new TaskFinishedMsg("x", 1, 8, "int", "int", {}, null, [], "s1");
    expect([i]).toEqual([TaskFinishedMsg.match({ key: "x" })]);
    expect([i]).not.toEqual([TaskFinishedMsg.match({ key: "y" })]);
    expect([i]).not.toEqual([Execute.match({ key: "x" })]);
    expect(i).toEqual(TaskFinishedMsg.match({ stimulusId: "s1", nbytes: 8 }));
    // Sets as sets (an array as the set of its elements), never as anything else.
    const g = new GatherDep("tcp://a:1", new Set(["x", "y"]), 10, "s2");
    expect(GatherDep.match({ toGather: new Set(["y", "x"]) }).matches(g)).toBe(true);
    expect(GatherDep.match({ toGather: ["x", "y"] as never }).matches(g)).toBe(true);
    expect(GatherDep.match({ toGather: {} as never }).matches(g)).toBe(false); // it threw
    expect(GatherDep.match({ toGather: new Set(["x"]) }).matches(g)).toBe(false);
    expect(String(GatherDep.match({ toGather: new Set(["x"]) }))).toBe(
      'GatherDep(toGather={"x"}) (partial match)',
    );
    expect(deepEqual(new Map([["a", 1]]), {})).toBe(false);
    expect(deepEqual(new Date(1), new Date(2))).toBe(false);
    expect(deepEqual(new Date(1), new Date(1))).toBe(true);
  });
});

describe("many stimuli at once", () => {
  it("handles 200,000 stimuli in one call (an array, not spread arguments)", () => {
    const ws = newWs({ validate: false });
    const stims = Array.from({ length: 200_000 }, (_, i) => free([`nothing-${i}`], `free-${i}`));
    expect(ws.handleStimuli(stims)).toEqual([]);
    ws.validateState();
  });
});
