import { describe, expect, test } from "vitest";
import type { GraphTask } from "../../protocol/messagesClient.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

const balance = (stimulusId = "balance"): SchedulerEvent => ({ kind: "balance", stimulusId });

/** Keys `t0`…`t{n-1}`, each made by `make`. */
function tasks(n: number, make: () => GraphTask): Record<string, GraphTask> {
  const out: Record<string, GraphTask> = {};
  for (let i = 0; i < n; i++) out[`t${i}`] = make();
  return out;
}

/**
 * w1 (one thread) processing `graph` (all of it: w2 registers afterwards), w2
 * idle with one thread. Queuing off, so that w1 holds the whole backlog.
 */
function backlog(
  graph: Record<string, GraphTask>,
  w2Resources: Record<string, number> = {},
  options: { unknownTaskDuration?: number } = {},
  before: (s: SchedulerState) => void = () => {},
): SchedulerState {
  const s = new SchedulerState({
    validate: true,
    workerSaturation: Number.POSITIVE_INFINITY,
    ...options,
  });
  s.handleStimulus(t.registerWorker("w1", 1, { PIN: 1 }));
  before(s);
  s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
  s.handleStimulus(t.registerWorker("w2", 1, w2Resources));
  return s;
}

function stolenKeys(out: ReturnType<SchedulerState["handleStimulus"]>): string[] {
  return t.summarize(out);
}

describe("balance: what is stolen", () => {
  test("an idle worker beside a backlog of long tasks: the newest are asked for, for it", () => {
    const s = backlog(tasks(10, () => t.task()));
    const out = s.handleStimulus(balance());
    // 10 × 0.5 s on w1; w2 takes tasks while it stays under half the average (2.5 s per thread).
    expect(stolenKeys(out)).toEqual([
      "w1 steal-request t9",
      "w1 steal-request t8",
      "w1 steal-request t7",
    ]);
    for (const key of ["t9", "t8", "t7"]) {
      const steal = s.steals.get(s.tasks.get(key) as never);
      expect(steal?.thief.address).toBe("w2");
      expect(steal?.stimulusId).toBe("balance");
    }
    expect(s.workStealing.requested).toBe(3);
    expect(s.stimulusLog.toArray().at(-1)?.kind).toBe("balance");
    // Asked-for tasks are no longer stealable.
    expect(s.workStealing.keyStealable.has(s.tasks.get("t9") as never)).toBe(false);
    // Two more rounds ask for t6 and t5 (see "balance: thieves"), then no
    // move pays. A round that asks for nothing leaves no record in the stimulus log.
    s.handleStimulus(balance(), balance());
    const records = s.stimulusLog.toArray().length;
    expect(s.handleStimulus(balance())).toEqual([]);
    expect(s.stimulusLog.toArray().length).toBe(records);
    s.validateState();
  });

  test("tasks whose inputs take far longer to move than to compute stay", () => {
    const setupBig = (nbytes: number) =>
      backlog(
        tasks(30, () => t.task(["big"])),
        {},
        { unknownTaskDuration: 0.01 },
        (s) => {
          s.handleStimulus(t.updateGraph("c", { big: t.task() }, ["big"]));
          s.handleStimulus(t.taskFinished("w1", "big", 1, nbytes));
        },
      );
    // 1 GB at 100 MB/s is 10 s to move a 10 ms task: past the last level.
    const big = setupBig(1_000_000_000);
    expect(big.workStealing.keyStealable.size).toBe(0);
    expect(big.handleStimulus(balance())).toEqual([]);
    // The same tasks with a small input are stolen.
    const small = setupBig(1000);
    // (1000 B / 100 MB/s + 100 ms) / 10 ms ≈ 10: level round(3.32 + 6) = 9.
    expect(small.workStealing.keyStealable.get(small.tasks.get("t0") as never)).toBe(9);
    expect(stolenKeys(small.handleStimulus(balance())).length).toBeGreaterThan(0);
  });

  test("the transfer time counts Dask's latency of 100 ms, not 10 ms", () => {
    // One input of 0 bytes and 0.1 s of compute: Dask's multiplier is
    // (0 + 0.1) / 0.1 = 1, level log2(1) + 6 = 6 (with 10 ms: 0.1, level 3).
    const s = backlog(
      tasks(3, () => t.task(["empty"])),
      {},
      { unknownTaskDuration: 0.1 },
      (s) => {
        s.handleStimulus(t.updateGraph("c", { empty: t.task() }, ["empty"]));
        s.handleStimulus(t.taskFinished("w1", "empty", 1, 0));
      },
    );
    expect(s.workStealing.keyStealable.get(s.tasks.get("t0") as never)).toBe(6);
  });

  test("a level exactly halfway between two rounds to the even one, as Python's round does", () => {
    // An input of 0 bytes: the multiplier is 100 ms (latency) over the duration,
    // here 2^0.5 and 2^8.5 exactly as floats, so log2(multiplier) + 6 is 6.5 and 14.5.
    const levelOf = (duration: number) => {
      const s = backlog(
        tasks(3, () => t.task(["empty"])),
        {},
        { unknownTaskDuration: duration },
        (s) => {
          s.handleStimulus(t.updateGraph("c", { empty: t.task() }, ["empty"]));
          s.handleStimulus(t.taskFinished("w1", "empty", 1, 0));
        },
      );
      expect(Math.log2(0.1 / duration) + 6).toBe(Math.floor(Math.log2(0.1 / duration) + 6) + 0.5);
      return s.workStealing.keyStealable.get(s.tasks.get("t0") as never);
    };
    // Dask: int(round(6.5)) is 6, int(round(14.5)) is 14 (Math.round: 7, and 15, past the last level).
    expect(levelOf(0.07071067811865475)).toBe(6);
    expect(levelOf(0.0002762135864009952)).toBe(14);
  });

  test("a thief that may not run the task does not get it; a loose restriction lets it", () => {
    const pinned = backlog(tasks(10, () => t.task([], { resources: { PIN: 1 } })));
    expect(pinned.handleStimulus(balance())).toEqual([]);
    const named = backlog(tasks(10, () => t.task([], { workers: ["w1"] })));
    expect(named.handleStimulus(balance())).toEqual([]);
    const loose = backlog(
      tasks(10, () => t.task([], { workers: ["w1"], allowOtherWorkers: true })),
    );
    expect(stolenKeys(loose.handleStimulus(balance())).length).toBeGreaterThan(0);
    // A thief that supplies the resource takes them.
    const supplied = backlog(
      tasks(10, () => t.task([], { resources: { PIN: 1 } })),
      { PIN: 1 },
    );
    expect(stolenKeys(supplied.handleStimulus(balance())).length).toBeGreaterThan(0);
  });

  test("a thief whose memory limit the task's inputs exceed is never chosen", () => {
    // w1 holds `big` (1 MB) and runs three tasks needing it; the idle thieves
    // register afterwards. A thief with a 500 kB limit would fail any of them
    // with a MemoryError (the check of `addToProcessing`) that w1 would not.
    const setupBig = (extras: [string, number | undefined][]) => {
      const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
      s.handleStimulus(t.registerWorker("w1", 1));
      s.handleStimulus(t.updateData("c", { big: ["w1"] }, undefined, 1_000_000));
      const graph = { a: t.task(["big"]), b: t.task(["big"]), c: t.task(["big"]) };
      s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
      for (const [address, memoryLimit] of extras) {
        s.handleStimulus(t.registerWorker(address, 1, {}, undefined, { memoryLimit }));
      }
      return s;
    };
    const small = setupBig([["w2", 500_000]]);
    expect(small.handleStimulus(balance())).toEqual([]);
    expect(small.workStealing.requested).toBe(0);
    small.validateState();
    // A thief whose limit takes them (or without a limit) does get one; the small one still not.
    for (const roomy of [2_000_000, undefined]) {
      const s = setupBig([
        ["w2", 500_000],
        ["w3", roomy],
      ]);
      expect(stolenKeys(s.handleStimulus(balance("b1")))).toEqual(["w1 steal-request c"]);
      const c = s.tasks.get("c") as never;
      expect(s.steals.get(c)?.thief.address).toBe("w3");
      expect(stolenKeys(s.handleStimulus(t.stealResponse("w1", "c", "ready", "b1")))).toEqual([
        "w3 compute-task c",
      ]);
      expect(s.workStealing.confirmed).toBe(1);
      s.validateState();
    }
  });

  test("a restricted task's thieves are found by address, host or name", () => {
    // Thieves on two hosts, one with a name; tasks pinned to each spelling.
    const run = (workers: string[], loose = false) => {
      const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
      s.handleStimulus(t.registerWorker("tcp://10.0.0.1:1000", 1));
      const graph = tasks(10, () =>
        t.task([], { workers: ["tcp://10.0.0.1:1000", ...workers], allowOtherWorkers: loose }),
      );
      s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
      s.handleStimulus(
        t.registerWorker("tcp://10.0.0.2:1001", 1),
        t.registerWorker("tcp://10.0.0.3:1002", 1, {}, undefined, { name: "alice" }),
        t.registerWorker("tcp://10.0.0.3:1003", 1),
      );
      s.handleStimulus(balance());
      s.validateState();
      return [...s.steals.values()].map((steal) => steal.thief.address);
    };
    const thieves = (workers: string[]) => [...new Set(run(workers))].sort();
    expect(thieves([])).toEqual([]);
    expect(thieves(["tcp://10.0.0.2:1001"])).toEqual(["tcp://10.0.0.2:1001"]);
    expect(thieves(["alice"])).toEqual(["tcp://10.0.0.3:1002"]);
    expect(thieves(["10.0.0.3"])).toEqual(["tcp://10.0.0.3:1002", "tcp://10.0.0.3:1003"]);
    // Named twice (by host and by name): the same thieves.
    expect(thieves(["10.0.0.3", "alice", "nobody"])).toEqual([
      "tcp://10.0.0.3:1002",
      "tcp://10.0.0.3:1003",
    ]);
    // Loose: the named thief first; once it is busy, or if none is named, any thief.
    expect(run(["alice"], true)[0]).toBe("tcp://10.0.0.3:1002");
    expect(run(["alice"], true).length).toBeGreaterThan(1);
    expect(run(["nobody"], true).length).toBeGreaterThan(0);
  });

  test("actors and seceded tasks are never stolen", () => {
    const actors = backlog(tasks(10, () => t.task([], { actor: true })));
    expect(actors.handleStimulus(balance())).toEqual([]);
    const seceded = backlog(tasks(10, () => t.task()));
    for (let i = 0; i < 10; i++) {
      seceded.handleStimulus(
        t.fromWorker("w1", { op: "long-running", key: `t${i}`, computeDuration: null }),
      );
    }
    expect(seceded.workStealing.keyStealable.size).toBe(0);
    expect(seceded.handleStimulus(balance())).toEqual([]);
  });

  test("nothing when no worker is idle, or every worker is", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    expect(s.handleStimulus(balance())).toEqual([]); // all idle
    const graph = tasks(20, () => t.task());
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    expect(s.idle.size).toBe(0);
    expect(s.handleStimulus(balance())).toEqual([]);
    expect(s.workStealing.requested).toBe(0);
  });
});

describe("balance: steals in flight", () => {
  test("in-flight occupancy follows confirm and refusal", () => {
    const s = backlog(tasks(10, () => t.task()));
    const w1 = s.workers.get("w1") as never;
    const w2 = s.workers.get("w2") as never;
    s.handleStimulus(balance("b1"));
    const tracking = s.workStealing;
    expect(tracking.inFlightOccupancy.get(w2)).toBeCloseTo(1.5);
    expect(tracking.inFlightOccupancy.get(w1)).toBeCloseTo(-1.5);
    expect(tracking.inFlightTasks.get(w2)).toBe(3);
    expect(tracking.combinedOccupancy(w1)).toBeCloseTo(3.5);

    expect(stolenKeys(s.handleStimulus(t.stealResponse("w1", "t9", "ready", "b1")))).toEqual([
      "w2 compute-task t9",
    ]);
    expect(tracking.confirmed).toBe(1);
    expect(tracking.inFlightTasks.get(w2)).toBe(2);
    expect(tracking.inFlightOccupancy.get(w2)).toBeCloseTo(1.0);
    // On the thief now, and stealable there.
    expect(tracking.stealable.get(w2)?.[0].has(s.tasks.get("t9") as never)).toBe(true);
    expect(tracking.combinedOccupancy(w2)).toBeCloseTo(1.5);

    s.handleStimulus(t.stealResponse("w1", "t8", "executing", "b1"));
    expect(s.tasks.get("t8")?.processingOn?.address).toBe("w1");
    expect(tracking.confirmed).toBe(1);
    expect(tracking.inFlightTasks.get(w2)).toBe(1);
    expect(tracking.inFlightOccupancy.get(w1)).toBeCloseTo(-0.5);
    s.handleStimulus(t.stealResponse("w1", "t7", "ready", "b1"));
    // Nothing left in flight: the totals start again from zero.
    expect(tracking.inFlightTasks.size).toBe(0);
    expect(tracking.inFlightOccupancy.size).toBe(0);
    s.validateState();
  });

  test("a thief leaving drops its totals; a victim leaving drops its steals", () => {
    const s = backlog(tasks(10, () => t.task()));
    s.handleStimulus(t.registerWorker("w3"));
    s.handleStimulus(balance("b1"));
    const tracking = s.workStealing;
    const thieves = new Set([...s.steals.values()].map((steal) => steal.thief.address));
    expect(thieves).toEqual(new Set(["w2", "w3"]));
    const w2 = s.workers.get("w2") as never;
    s.handleStimulus(t.removeWorker("w2"));
    expect(tracking.inFlightTasks.has(w2)).toBe(false);
    s.validateState();
    s.handleStimulus(t.removeWorker("w1"));
    expect(s.steals.size).toBe(0);
    expect(tracking.inFlightTasks.size).toBe(0);
    expect(tracking.stealable.has(w2)).toBe(false);
    s.validateState();
  });

  test("a task leaving processing while being stolen is taken out of the totals", () => {
    const s = backlog(tasks(10, () => t.task()));
    s.handleStimulus(balance("b1"));
    s.handleStimulus(t.fromClient({ op: "client-releases-keys", clientId: "c", keys: ["t9"] }));
    expect(s.steals.size).toBe(2);
    expect(s.workStealing.inFlightTasks.get(s.workers.get("w2") as never)).toBe(2);
    s.validateState();
  });
});

function stealingState(options: { unknownTaskDuration?: number } = {}): SchedulerState {
  return new SchedulerState({
    validate: true,
    workerSaturation: Number.POSITIVE_INFINITY,
    ...options,
  });
}

/** Keys `${prefix}0`… each made by `make`. */
function tasksNamed(n: number, make: () => GraphTask, prefix = "t"): Record<string, GraphTask> {
  const out: Record<string, GraphTask> = {};
  for (let i = 0; i < n; i++) out[`${prefix}${i}`] = make();
  return out;
}

describe("balance: the move condition", () => {
  // Mutant S01 (workStealing.ts, worthMoving): `≤` made `<`. Mutant S05
  // (stealTracking.ts, commCost): the inputs the worker holds counted as to fetch.
  test("a steal is asked for when the thief would finish exactly when the victim would", () => {
    const s = stealingState();
    s.handleStimulus(t.registerWorker("w1"));
    // x, on w1, takes 0.25 s to move at 100 MB/s.
    s.handleStimulus(t.updateData("c", { x: ["w1"] }, undefined, 25_000_000));
    const graph = tasksNamed(2, () => t.task(["x"]));
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    s.handleStimulus(t.registerWorker("w2"));
    // thief: 0 + 0.25 (fetch x) + 0.5 = 0.75; victim: 1.0 − (0 (holds x) + 0.5) / 2 = 0.75.
    expect(t.summarize(s.handleStimulus(balance()))).toEqual(["w1 steal-request t1"]);
    s.validateState();
  });
});

describe("balance: victims", () => {
  // Mutant S06 (workStealing.ts, potentialVictims): the 0.2 s minimum dropped.
  test("a worker with a backlog but less than 0.2 s of work is no victim", () => {
    const s = stealingState({ unknownTaskDuration: 0.05 });
    s.handleStimulus(t.registerWorker("w1"));
    const graph = tasksNamed(3, () => t.task());
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    s.handleStimulus(t.registerWorker("w2"));
    expect(s.workers.get("w1")?.occupancy).toBeCloseTo(0.15);
    expect(s.handleStimulus(balance())).toEqual([]);
    s.validateState();
    // The same backlog of 0.3 s is stolen from.
    const more = stealingState({ unknownTaskDuration: 0.1 });
    more.handleStimulus(t.registerWorker("w1"));
    more.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    more.handleStimulus(t.registerWorker("w2"));
    expect(t.summarize(more.handleStimulus(balance()))).toEqual(["w1 steal-request t2"]);
    s.validateState();
  });

  test("with none saturated, the victims are those of the ten busiest with a backlog", () => {
    // Dask takes `topk(10, workers, key=combined_occupancy)` and only then
    // drops those with no backlog, 0.2 s of work or less, or idle.
    const s = stealingState();
    const busy = Array.from({ length: 10 }, (_, i) => `b${i}`);
    for (const name of busy) {
      s.handleStimulus(t.registerWorker(name, 3));
      // Three tasks on three threads: 1.5 s of work, none queued.
      const graph = tasksNamed(3, () => t.task([], { workers: [name] }), `${name}-`);
      s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    }
    // v: two tasks on one thread (1 s of work, 0.5 s queued: not saturated
    // beside an average of 0.5 s per thread), the eleventh busiest.
    s.handleStimulus(t.registerWorker("v"));
    const queued = tasksNamed(
      2,
      () => t.task([], { workers: ["v"], allowOtherWorkers: true }),
      "v-",
    );
    s.handleStimulus(t.updateGraph("c", queued, Object.keys(queued)));
    s.handleStimulus(t.registerWorker("w"));
    expect(s.workers.get("v")?.processing.size).toBe(2);
    expect(s.idle.size).toBe(1);
    // The ten busiest have no backlog, and v is not among them: no victim.
    expect(s.handleStimulus(balance())).toEqual([]);
    // With one busy worker fewer, v is among the ten busiest: its newest is stolen.
    s.handleStimulus(t.removeWorker("b9"));
    expect(t.summarize(s.handleStimulus(balance()))).toEqual(["v steal-request v-1"]);
    s.validateState();
  });

  // Mutant S02 (workStealing.ts, isSaturated): 1.9 × the average made 0.9 ×.
  test("while a worker is saturated, a busy one under 1.9 times the average is no victim", () => {
    const s = stealingState();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w3"));
    // w1: 40 tasks only it may run (pending 19.5 s, over 1.9 × the average of 10 s).
    const pinned = tasksNamed(40, () => t.task([], { workers: ["w1"] }), "p");
    s.handleStimulus(t.updateGraph("c", pinned, Object.keys(pinned)));
    // w3: 20 tasks that prefer it but may go elsewhere (pending 9.5 s: under 19 s, over 9 s).
    const loose = tasksNamed(
      20,
      () => t.task([], { workers: ["w3"], allowOtherWorkers: true }),
      "q",
    );
    s.handleStimulus(t.updateGraph("c", loose, Object.keys(loose)));
    s.handleStimulus(t.registerWorker("w2"));
    expect(s.workers.get("w1")?.processing.size).toBe(40);
    expect(s.workers.get("w3")?.processing.size).toBe(20);
    // Only w1 is saturated, and w2 may run none of its tasks: nothing is stolen.
    expect(s.handleStimulus(balance())).toEqual([]);
    s.validateState();
  });
});

describe("balance: thieves", () => {
  // Dask's thieves are `set(s.idle.values())`: an idle worker whose steals in
  // flight already make it occupied is still one at the start of a round
  // (it leaves the round once it is asked a steal for and is not unoccupied).
  test("an idle worker is a thief whatever its steals in flight: each round asks one more while it pays", () => {
    const s = backlog(tasks(10, () => t.task()));
    expect(t.summarize(s.handleStimulus(balance("b1")))).toEqual([
      "w1 steal-request t9",
      "w1 steal-request t8",
      "w1 steal-request t7",
    ]);
    // w2: 1.5 s in flight, w1: 3.5 s. 1.5 + 0.5 ≤ 3.5 − 0.25: t6 is asked for.
    expect(t.summarize(s.handleStimulus(balance("b2")))).toEqual(["w1 steal-request t6"]);
    // 2.0 + 0.5 ≤ 3.0 − 0.25: t5; then 2.5 + 0.5 > 2.5 − 0.25: no more.
    expect(t.summarize(s.handleStimulus(balance("b3")))).toEqual(["w1 steal-request t5"]);
    expect(s.handleStimulus(balance("b4"))).toEqual([]);
    s.validateState();
  });

  // Dask's `stealing_objective` weighs a thief by its occupancy counting the
  // steals in flight ("it must be kept in sync for work-stealing to work
  // correctly"): a round spreads its steals over equally idle thieves.
  test("the thief is chosen by its occupancy counting the steals in flight", () => {
    const s = stealingState();
    s.handleStimulus(t.registerWorker("w1"));
    const graph = tasksNamed(10, () => t.task());
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    s.handleStimulus(t.registerWorker("w2", 2), t.registerWorker("w3", 2));
    const out = s.handleStimulus(balance());
    expect(t.summarize(out).slice(0, 2)).toEqual(["w1 steal-request t9", "w1 steal-request t8"]);
    const thiefOf = (key: string) => s.steals.get(s.tasks.get(key) as never)?.thief.address;
    // t9 to w2 (the first registered of two empty thieves); t8 then to w3,
    // whose combined occupancy (0) is below w2's (0.5 s in flight).
    expect([thiefOf("t9"), thiefOf("t8")]).toEqual(["w2", "w3"]);
    s.validateState();
  });
});
