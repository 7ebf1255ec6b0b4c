import { describe, expect, test } from "vitest";
import { namedWorkers, noWorkerReason, taskSlotsAvailable } from "./placement.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function noQueue(): SchedulerState {
  return new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
}

/** Run `key`, processing somewhere, to completion with a result of `nbytes`. */
function finish(s: SchedulerState, key: string, nbytes: number): void {
  const ts = s.tasks.get(key);
  if (ts?.processingOn == null) throw new Error(`${key} is not processing`);
  s.handleStimulus(t.taskFinished(ts.processingOn.address, key, ts.runId, nbytes));
}

describe("data locality and occupancy", () => {
  test("a task goes to the worker holding most of its inputs' bytes", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(), c: t.task(), d: t.task(["a", "b", "c"]) }, [
        "d",
      ]),
    );
    const holders = new Set(["a", "b", "c"].map((k) => s.tasks.get(k)?.processingOn?.address));
    expect(holders.size).toBe(3);
    const bHolder = s.tasks.get("b")?.processingOn?.address;
    finish(s, "a", 10);
    finish(s, "b", 5000);
    finish(s, "c", 20);
    expect(s.tasks.get("d")?.processingOn?.address).toBe(bHolder);
  });

  /**
   * w1 holds `a` (of `nbytes`) and has a backlog of 8 tasks (4 s) pinned to it
   * by a resource only it has; w2 is idle. Where does a dependent of `a` go?
   */
  function dependentOfBusyHolder(nbytes: number): string | undefined {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1", 1, { PIN: 1 }), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { resources: { PIN: 1 } }) }, ["a"]));
    finish(s, "a", nbytes);
    const backlog: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 8; i++) backlog[`busy${i}`] = t.task([], { resources: { PIN: 1 } });
    s.handleStimulus(t.updateGraph("c", backlog, Object.keys(backlog)));
    expect(s.workers.get("w1")?.occupancy).toBe(4);
    s.handleStimulus(t.updateGraph("c", { b: t.task(["a"]) }, ["b"]));
    return s.tasks.get("b")?.processingOn?.address;
  }

  test("a busy holder of a small input loses to an idle peer", () => {
    expect(dependentOfBusyHolder(100)).toBe("w2");
  });

  test("a big input keeps the task on its busy holder", () => {
    expect(dependentOfBusyHolder(10_000_000_000)).toBe("w1"); // 100 s to move at 100 MB/s
  });

  test("tasks without inputs spread round-robin over idle workers", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 6; i++) tasks[`x${i}`] = t.task();
    const out = s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    const counts: Record<string, number> = {};
    for (const { worker } of t.computeTasks(out)) counts[worker] = (counts[worker] ?? 0) + 1;
    expect(counts).toEqual({ w1: 2, w2: 2, w3: 2 });
  });
});

describe("co-assignment of root-ish tasks with queuing off", () => {
  /** Where each of `x0`…`x{n-1}` (a group without inputs, one update-graph) went. */
  function placeGroup(s: SchedulerState, n: number, prefix = "x"): string[] {
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < n; i++) tasks[`${prefix}-${i}`] = t.task();
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    return Object.keys(tasks).map((k) => s.tasks.get(k)?.processingOn?.address ?? "-");
  }

  test("a group larger than twice the threads goes in contiguous runs, one per worker", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
    expect(placeGroup(s, 12)).toEqual([
      ...Array(4).fill("w1"),
      ...Array(4).fill("w2"),
      ...Array(4).fill("w3"),
    ]);
  });

  test("a run is the group's share for the worker's threads", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("big", 3), t.registerWorker("small", 1));
    // 16 tasks over 4 threads: 12 for the 3-thread worker, then 4.
    expect(placeGroup(s, 16)).toEqual([...Array(12).fill("big"), ...Array(4).fill("small")]);
  });

  test("siblings a later task combines need no transfer", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 8; i++) tasks[`leaf-${i}`] = t.task();
    for (let i = 0; i < 4; i++) tasks[`pair-${i}`] = t.task([`leaf-${2 * i}`, `leaf-${2 * i + 1}`]);
    s.handleStimulus(t.updateGraph("c", tasks, ["pair-0", "pair-1", "pair-2", "pair-3"]));
    for (let i = 0; i < 8; i++) finish(s, `leaf-${i}`, 8);
    for (let i = 0; i < 4; i++) {
      const pair = s.tasks.get(`pair-${i}`);
      const leaf = s.tasks.get(`leaf-${2 * i}`);
      expect(pair?.processingOn?.address).toBe([...(leaf?.whoHas ?? [])][0]?.address);
      expect([...(s.tasks.get(`leaf-${2 * i + 1}`)?.whoHas ?? [])]).toEqual([
        ...(leaf?.whoHas ?? []),
      ]);
    }
  });

  test("a run ends when its worker leaves; the rest of the group goes elsewhere", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    placeGroup(s, 3, "y"); // not root-ish (3 ≤ 4): round-robin, no run recorded
    const first = placeGroup(s, 8, "x");
    expect(first.slice(0, 4).every((w) => w === first[0])).toBe(true);
    expect(s.taskGroups.get("x")?.lastWorker).toBeNull();
    s.handleStimulus(t.removeWorker("w1"));
    for (const ts of s.tasks.values()) {
      if (ts.state === "processing") expect(ts.processingOn?.address).toBe("w2");
    }
  });

  test("a later batch of the group starts afresh on the least busy worker", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    // 21 tasks: runs of 10 on w1 and w2, then the 21st starts a new run on w1.
    const first = placeGroup(s, 21);
    expect(first.filter((w) => w === "w1").length).toBe(11);
    // The next batch does not continue that run: w2 is less busy.
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 21; i < 24; i++) tasks[`x-${i}`] = t.task();
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(Object.keys(tasks).map((k) => s.tasks.get(k)?.processingOn?.address)).toEqual([
      "w2",
      "w2",
      "w2",
    ]);
  });

  test("groups count the tasks not forgotten and are dropped when empty", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"));
    placeGroup(s, 5, "x");
    placeGroup(s, 2, "z");
    expect(s.taskGroups.get("x")?.size).toBe(5);
    expect(s.taskGroups.get("z")?.size).toBe(2);
    s.handleStimulus(t.releaseKeys("c", ["z-0", "z-1"]));
    expect(s.taskGroups.has("z")).toBe(false);
    expect(s.taskGroups.get("x")?.size).toBe(5);
  });
});

describe("resource restrictions", () => {
  test("a restricted task only goes to a worker with enough of each resource", () => {
    const s = noQueue();
    s.handleStimulus(
      t.registerWorker("cpu"),
      t.registerWorker("small", 1, { GPU: 1, MEM: 10 }),
      t.registerWorker("big", 1, { GPU: 2, MEM: 100 }),
    );
    s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { resources: { GPU: 2, MEM: 50 } }) }, ["x"]),
    );
    expect(s.tasks.get("x")?.processingOn?.address).toBe("big");
  });

  test("a worker that does not declare a resource never runs a task needing it, even 0 of it", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("plain"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { resources: { GPU: 0 } }) }, ["x"]));
    const x = s.tasks.get("x");
    if (x === undefined) throw new Error("no x");
    expect(x.state).toBe("no-worker");
    expect(noWorkerReason(s, x)).toBe(
      "no running worker provides resource 'GPU' (the task needs 0)",
    );
    s.handleStimulus(t.registerWorker("declares", 1, { GPU: 0 }));
    expect(x.processingOn?.address).toBe("declares");
    s.validateState();
  });

  test("resources named like Object members are resources like any other", () => {
    const s = noQueue();
    // As decoded from the wire: "__proto__" is an own key.
    const declared = JSON.parse('{"__proto__": 1, "constructor": 2}') as Record<string, number>;
    s.handleStimulus(t.registerWorker("w", 1, declared));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          p: t.task([], { resources: JSON.parse('{"__proto__": 1}') }),
          k: t.task([], { resources: { constructor: 1 } }),
          n: t.task([], { resources: { toString: 1 } }),
        },
        ["p", "k", "n"],
      ),
    );
    const n = s.tasks.get("n");
    if (n === undefined) throw new Error("no n");
    // The worker does not declare toString: n must not run there.
    expect(n.state).toBe("no-worker");
    expect(noWorkerReason(s, n)).toBe(
      "no running worker provides resource 'toString' (the task needs 1)",
    );
    const w = s.workers.get("w");
    expect(Object.entries(w?.usedResources ?? {})).toEqual([
      ["__proto__", 1],
      ["constructor", 1],
    ]);
    s.validateState();
    for (const key of ["p", "k"]) {
      s.handleStimulus(t.taskFinished("w", key, s.tasks.get(key)?.runId ?? -1));
    }
    expect(Object.entries(w?.usedResources ?? {})).toEqual([
      ["__proto__", 0],
      ["constructor", 0],
    ]);
    s.validateState();
  });

  test("no-worker reasons name what is missing", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("a", 1, { GPU: 2 }), t.registerWorker("b", 1, { MEM: 100 }));
    s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { resources: { GPU: 1, MEM: 50 } }) }, ["x"]),
    );
    const x = s.tasks.get("x");
    if (x === undefined) throw new Error("no x");
    expect(x.state).toBe("no-worker");
    expect(noWorkerReason(s, x)).toBe(
      "no single running worker has all of the resources the task needs (GPU=1, MEM=50)",
    );
  });
});

describe("queuing", () => {
  test("slots are max(ceil(saturation × nthreads), 1) minus tasks not seceded", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: 1.5 });
    s.handleStimulus(t.registerWorker("w1", 4));
    const w1 = s.workers.get("w1");
    if (w1 === undefined) throw new Error("no w1");
    expect(taskSlotsAvailable(w1, 1.5)).toBe(6);
    expect(taskSlotsAvailable(w1, 0.01)).toBe(1);
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 10; i++) tasks[`x-${i}`] = t.task(); // one group of 10 > 2 × 4 threads
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(w1.processing.size).toBe(6);
    expect(s.queued.size).toBe(4);
    expect(s.idleTaskCount.size).toBe(0);
    s.validateState();
  });

  test("queued tasks go out best priority first, to the least loaded worker per thread", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: 1 });
    const tasks = {
      low: t.task([], { priority: -1 }),
      high: t.task([], { priority: 5 }),
      mid: t.task(),
    };
    s.handleStimulus(t.updateGraph("c", tasks, ["low", "high", "mid"]));
    expect(s.queued.size).toBe(3);
    const out = s.handleStimulus(t.registerWorker("w1", 2));
    expect(t.summarize(out)).toEqual(["w1 compute-task high", "w1 compute-task mid"]);
    const out2 = s.handleStimulus(t.registerWorker("w2", 1));
    expect(t.summarize(out2)).toEqual(["w2 compute-task low"]);
  });

  test("a task of a small group with an input runs while root-ish tasks wait", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: 1 });
    s.handleStimulus(t.registerWorker("w1"));
    const tasks = {
      a: t.task(),
      b: t.task(["a"]),
      "x-1": t.task(),
      "x-2": t.task(),
      "x-3": t.task(),
    };
    s.handleStimulus(t.updateGraph("c", tasks, ["b", "x-1", "x-2", "x-3"]));
    finish(s, "a", 1);
    expect(s.tasks.get("b")?.state).toBe("processing");
    expect(s.tasks.get("x-3")?.state).toBe("queued");
  });
});

describe("root-ish tasks (Dask's is_rootish) with queuing on", () => {
  /** `n` tasks `load-0`… each needing `cfg`, held by `holder`, on one thread per worker. */
  function loadsSharingCfg(workers: string[], holder: string, n: number): SchedulerState {
    const s = new SchedulerState({ validate: true }); // workerSaturation 1.1: 2 slots a thread
    for (const w of workers) s.handleStimulus(t.registerWorker(w));
    s.handleStimulus(t.updateData("c", { cfg: [holder] }));
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < n; i++) tasks[`load-${i}`] = t.task(["cfg"]);
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    return s;
  }

  test("a large group sharing one small input is queued beyond the workers' slots", () => {
    const s = loadsSharingCfg(["w1", "w2"], "w1", 100);
    expect(s.queued.size).toBe(96);
    expect(s.workers.get("w1")?.processing.size).toBe(2);
    // Queued wherever its input is: w2 holds no cfg and takes its share.
    expect(s.workers.get("w2")?.processing.size).toBe(2);
    s.validateState();
    // The task dispatched from the queue is told where its input is.
    const running = s.tasks.get("load-0");
    const out = s.handleStimulus(
      t.taskFinished(running?.processingOn?.address ?? "?", "load-0", running?.runId ?? 0),
    );
    const sent = t.computeTasks(out);
    expect(sent).toHaveLength(1);
    expect(sent[0].msg.key).toBe("load-4");
    expect(sent[0].msg.whoHas.get("cfg")).toEqual(["w1"]);
    expect(s.queued.size).toBe(95);
  });

  test("a group without inputs no larger than twice the threads is not queued", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 2)); // 3 slots
    const tasks = { "a-1": t.task(), "a-2": t.task(), "a-3": t.task(), "a-4": t.task() };
    const out = s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(t.computeTasks(out)).toHaveLength(4);
    expect(s.queued.size).toBe(0);
    // One more makes it root-ish: the fifth waits, the slots being taken.
    s.handleStimulus(t.updateGraph("c", { "a-5": t.task() }, ["a-5"]));
    expect(s.tasks.get("a-5")?.state).toBe("queued");
  });

  test("a group whose input groups hold 5 tasks or more is not queued; 4 are few enough", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateData("c", { "cfg-0": ["w1"], "cfg-1": ["w1"], "cfg-2": ["w1"] }));
    s.handleStimulus(t.updateData("c", { "cfg-3": ["w1"] }));
    const few: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 20; i++) few[`few-${i}`] = t.task([`cfg-${i % 4}`]);
    s.handleStimulus(t.updateGraph("c", few, Object.keys(few)));
    expect(s.queued.size).toBe(18);
    // A fifth task in the group `cfg`: the tasks of the input groups count, used or not.
    // The tasks already queued stay so (whether a task is root-ish changes, as in Dask).
    s.handleStimulus(t.updateData("c", { "cfg-4": ["w1"] }));
    const many: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 20; i++) many[`many-${i}`] = t.task([`cfg-${i % 5}`]);
    s.handleStimulus(t.updateGraph("c", many, Object.keys(many)));
    expect(s.queued.size).toBe(18);
    expect(s.workers.get("w1")?.processing.size).toBe(22);
    s.validateState();
  });

  test("the groups of inputs forgotten long ago count for nothing, and are not all kept", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    // Keeps the group `load` alive while the group `cfg` comes and goes.
    s.handleStimulus(t.updateGraph("c", { "load-999": t.task() }, ["load-999"]));
    const load = s.taskGroups.get("load");
    for (let round = 0; round < 20; round++) {
      s.handleStimulus(t.updateData("c", { cfg: ["w1"] }));
      const tasks: Record<string, ReturnType<typeof t.task>> = {};
      for (let i = 0; i < 10; i++) tasks[`load-${round}-${i}`] = t.task(["cfg"]);
      s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
      // Root-ish each round: the `cfg` groups dropped before count for nothing.
      expect(s.queued.size).toBe(9);
      s.handleStimulus(t.releaseKeys("c", [...Object.keys(tasks), "cfg"]));
      expect(s.taskGroups.has("cfg")).toBe(false);
    }
    expect(s.taskGroups.get("load")).toBe(load);
    expect(load?.dependencies.size).toBeLessThanOrEqual(9);
    s.validateState();
  });

  test("a queued task whose input is lost leaves the queue, and is computed once it is back", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const tasks: Record<string, ReturnType<typeof t.task>> = { cfg: t.task() };
    for (let i = 0; i < 30; i++) tasks[`load-${i}`] = t.task(["cfg"]);
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks).slice(1)));
    const cfg = s.tasks.get("cfg");
    const holder = cfg?.processingOn?.address ?? "?";
    const other = holder === "w1" ? "w2" : "w1";
    s.handleStimulus(t.taskFinished(holder, "cfg", cfg?.runId ?? 0));
    expect(s.queued.size).toBe(26);
    // The only holder of cfg leaves: no load may stay queued (nor run) without it.
    s.handleStimulus(t.removeWorker(holder));
    expect(s.queued.size).toBe(0);
    expect(cfg?.state).toBe("processing");
    expect(cfg?.processingOn?.address).toBe(other);
    for (let i = 0; i < 30; i++) expect(s.tasks.get(`load-${i}`)?.state).toBe("waiting");
    s.validateState();
    const out = s.handleStimulus(t.taskFinished(other, "cfg", cfg?.runId ?? 0));
    const sent = t.computeTasks(out);
    expect(sent.map((c) => c.msg.whoHas.get("cfg"))).toEqual([[other], [other]]);
    expect(s.queued.size).toBe(28);
    s.validateState();
  });

  test("a queued task too large for the worker errs as it is sent, and the next takes its slot", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { memoryLimit: 1000 }));
    const data = (key: string, nbytes: number) =>
      t.fromClient({
        op: "update-data",
        keys: [{ key, workers: ["w1"], nbytes, typename: "Buffer" }],
        clientId: "c",
      });
    s.handleStimulus(data("big", 5000), data("small", 10));
    // Two tasks fill w1's two slots; then ten loads, root-ish, wait.
    s.handleStimulus(t.updateGraph("c", { "x-1": t.task(), "x-2": t.task() }, ["x-1", "x-2"]));
    const loads: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 10; i++) loads[`load-${i}`] = t.task([i % 2 === 0 ? "big" : "small"]);
    s.handleStimulus(t.updateGraph("c", loads, Object.keys(loads)));
    expect(s.queued.size).toBe(10);
    const out = s.handleStimulus(t.taskFinished("w1", "x-1", s.tasks.get("x-1")?.runId ?? 0));
    expect(s.tasks.get("load-0")?.state).toBe("erred");
    expect(t.computeTasks(out).map((c) => c.msg.key)).toEqual(["load-1"]);
    s.validateState();
  });

  test("a queued task whose scattered input its only holder drops is cancelled, not left queued", () => {
    const s = loadsSharingCfg(["w1"], "w1", 10);
    expect(s.queued.size).toBe(8);
    // Scattered data a worker drops is lost for good: its dependents are cancelled.
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "cfg" }));
    expect(s.queued.size).toBe(0);
    expect(s.tasks.size).toBe(0);
    expect(t.summarize(out)).toContain("client:c cancelled-keys load-9");
    s.validateState();
  });
});

describe("root-ish tasks with queuing off", () => {
  test("a large group sharing one small input is co-assigned, not gathered on the holder", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateData("c", { cfg: ["w1"] }));
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 20; i++) tasks[`load-${i}`] = t.task(["cfg"]);
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    const where = Object.keys(tasks).map((k) => s.tasks.get(k)?.processingOn?.address);
    expect(where.slice(0, 10).every((w) => w === where[0])).toBe(true);
    expect(where.slice(10).every((w) => w === where[10] && w !== where[0])).toBe(true);
  });
});

describe("worker restrictions (workers=, allowOtherWorkers)", () => {
  const where = (s: SchedulerState, key: string) => s.tasks.get(key)?.processingOn?.address;

  test("a task runs only on the workers it names, by address or by host", () => {
    const s = noQueue();
    s.handleStimulus(
      t.registerWorker("tcp://10.0.0.1:1"),
      t.registerWorker("tcp://10.0.0.2:1"),
      t.registerWorker("tcp://10.0.0.2:2"),
    );
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 4; i++) tasks[`a${i}`] = t.task([], { workers: ["tcp://10.0.0.1:1"] });
    for (let i = 0; i < 4; i++) tasks[`h${i}`] = t.task([], { workers: ["10.0.0.2"] });
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    for (let i = 0; i < 4; i++) {
      expect(where(s, `a${i}`)).toBe("tcp://10.0.0.1:1");
      expect(where(s, `h${i}`)).toMatch(/^tcp:\/\/10\.0\.0\.2:/);
    }
    // Not queued even with queuing on: only the named workers may take them.
    const q = new SchedulerState({ validate: true, workerSaturation: 1 });
    q.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    q.handleStimulus(t.updateGraph("c", { x: t.task([], { workers: ["w2"] }) }, ["x"]));
    expect(where(q, "x")).toBe("w2");
  });

  test("a task runs on the worker it names by its registered name; a name waits for its worker", () => {
    const s = noQueue();
    s.handleStimulus(
      t.registerWorker("tcp://10.0.0.1:1", 1, {}, undefined, { name: "gpu-0" }),
      t.registerWorker("tcp://10.0.0.1:2"),
    );
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 3; i++) tasks[`g${i}`] = t.task([], { workers: ["gpu-0"] });
    tasks.later = t.task([], { workers: ["gpu-1"] });
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    for (let i = 0; i < 3; i++) expect(where(s, `g${i}`)).toBe("tcp://10.0.0.1:1");
    expect(s.tasks.get("later")?.state).toBe("no-worker");
    expect(namedWorkers(s, new Set(["gpu-0", "gpu-1"]))).toEqual({
      workers: [s.workers.get("tcp://10.0.0.1:1")],
      unmatched: ["gpu-1"],
    });
    s.handleStimulus(t.registerWorker("tcp://10.0.0.3:1", 1, {}, undefined, { name: "gpu-1" }));
    expect(where(s, "later")).toBe("tcp://10.0.0.3:1");
  });

  test("no named worker running: no-worker with the reason, runnable once one joins", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { workers: ["w2", "w3"] }) }, ["x"]),
    );
    const x = s.tasks.get("x");
    expect(x?.state).toBe("no-worker");
    if (x === undefined) throw new Error("no x");
    expect(noWorkerReason(s, x)).toBe(
      "none of the workers it is restricted to is running (workers=[w2, w3])",
    );
    expect(t.summarize(out)).toContain("client:c task-no-worker x");
    const out2 = s.handleStimulus(t.registerWorker("w3"));
    expect(t.summarize(out2)).toEqual(["w3 compute-task x", "client:c task-runnable x"]);
  });

  test("allowOtherWorkers: the named workers first, any other when none of them runs", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          named: t.task([], { workers: ["w2"], allowOtherWorkers: true }),
          absent: t.task([], { workers: ["w9"], allowOtherWorkers: true }),
        },
        ["named", "absent"],
      ),
    );
    expect(where(s, "named")).toBe("w2");
    expect(["w1", "w2"]).toContain(where(s, "absent"));
  });

  test("a restricted task is not stolen by a worker it does not name", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { workers: ["w1"] }) }, ["x"]));
    expect(where(s, "x")).toBe("w1");
    const out = s.handleStimulus(t.stealRequest("x", "w1", "w2"));
    expect(t.summarize(out)).toEqual([]);
    // Without a thief named, no other worker may take it either.
    expect(t.summarize(s.handleStimulus(t.stealRequest("x", "w1")))).toEqual([]);
  });

  test("the named worker leaving sends the task to no-worker, not elsewhere", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { workers: ["w1"] }) }, ["x"]));
    s.handleStimulus(t.removeWorker("w1"));
    expect(s.tasks.get("x")?.state).toBe("no-worker");
    s.validateState();
  });
});

describe("update-graph refuses malformed worker restrictions", () => {
  test.each([
    [[], "must be a non-empty array of worker addresses, hosts or names, got []"],
    [["w1", ""], "must be a non-empty array of worker addresses, hosts or names"],
    ["w1", "must be a non-empty array of worker addresses, hosts or names"],
  ])("workers %j", (workers, message) => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { workers: workers as unknown as string[] }) }, ["x"]),
    );
    expect(JSON.stringify(out)).toContain(`task 'x': workers ${message}`);
    expect(s.tasks.has("x")).toBe(false);
  });

  test("allowOtherWorkers must be a boolean", () => {
    const s = noQueue();
    const out = s.handleStimulus(
      t.updateGraph(
        "c",
        { x: t.task([], { workers: ["w1"], allowOtherWorkers: 1 as unknown as boolean }) },
        ["x"],
      ),
    );
    expect(JSON.stringify(out)).toContain("task 'x': allowOtherWorkers must be a boolean");
  });
});

describe("actors", () => {
  test("two actors go to different workers of an idle cluster, even when one holds their input", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { d: t.task() }, ["d"]));
    const holder = s.tasks.get("d")?.processingOn?.address;
    finish(s, "d", 10_000_000_000); // 100 s to move at 100 MB/s: locality would win
    s.handleStimulus(
      t.updateGraph(
        "c",
        { a1: t.task(["d"], { actor: true }), a2: t.task(["d"], { actor: true }) },
        ["a1", "a2"],
      ),
    );
    const homes = ["a1", "a2"].map((k) => s.tasks.get(k)?.processingOn?.address);
    expect(homes[0]).toBe(holder);
    expect(new Set(homes).size).toBe(2);
    s.validateState();
  });

  test("the worker with fewest actors wins over a less busy one; actors take no root-task path", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1", 1, { PIN: 1 }), t.registerWorker("w2"));
    const backlog: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 8; i++) backlog[`busy${i}`] = t.task([], { resources: { PIN: 1 } });
    s.handleStimulus(t.updateGraph("c", backlog, Object.keys(backlog)));
    expect(s.workers.get("w1")?.occupancy).toBe(4);
    // Both have no actor: the less busy takes the first.
    s.handleStimulus(t.updateGraph("c", { a1: t.task([], { actor: true }) }, ["a1"]));
    expect(s.tasks.get("a1")?.processingOn?.address).toBe("w2");
    // w2 has one now: the busy w1 has none, and takes the second (as Dask's objective).
    s.handleStimulus(t.updateGraph("c", { a2: t.task([], { actor: true }) }, ["a2"]));
    expect(s.tasks.get("a2")?.processingOn?.address).toBe("w1");
    // A task that is no actor still goes by occupancy alone.
    s.handleStimulus(t.updateGraph("c", { plain: t.task() }, ["plain"]));
    expect(s.tasks.get("plain")?.processingOn?.address).toBe("w2");
    s.validateState();
  });

  test("restrictions still bind an actor, and queuing never holds one back", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: 1 });
    s.handleStimulus(t.registerWorker("w1", 1, { GPU: 1 }), t.registerWorker("w2"));
    s.handleStimulus(
      t.updateGraph("c", { a1: t.task([], { actor: true, resources: { GPU: 1 } }) }, ["a1"]),
    );
    s.handleStimulus(
      t.updateGraph("c", { a2: t.task([], { actor: true, resources: { GPU: 1 } }) }, ["a2"]),
    );
    expect(s.tasks.get("a1")?.processingOn?.address).toBe("w1");
    expect(s.tasks.get("a2")?.processingOn?.address).toBe("w1");
    // Every slot is taken: a root task would be queued, an actor is placed.
    s.handleStimulus(t.updateGraph("c", { r: t.task() }, ["r"]));
    s.handleStimulus(t.updateGraph("c", { a3: t.task([], { actor: true }) }, ["a3"]));
    expect(s.tasks.get("r")?.processingOn?.address).toBe("w2");
    expect(s.tasks.get("a3")?.processingOn?.address).toBe("w2");
    s.validateState();
  });
});

/** Where each of `x-0`…`x-{n-1}` (a group without inputs, one update-graph) went. */
function placeGroup(s: SchedulerState, n: number): string[] {
  const tasks: Record<string, ReturnType<typeof t.task>> = {};
  for (let i = 0; i < n; i++) tasks[`x-${i}`] = t.task();
  s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
  return Object.keys(tasks).map((k) => s.tasks.get(k)?.processingOn?.address ?? "-");
}

describe("co-assignment of root-ish tasks with queuing off: run length and ties", () => {
  // Mutant L10 (placement.ts, decideWorkerRootishQueuingDisabled): the run
  // length rounded up instead of down (Dask: math.floor(len(tg) / total_nthreads * ws.nthreads)).
  test("a run is the group's share for the worker's threads, rounded down", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    // 5 tasks over 2 threads: runs of floor(2.5) = 2; the fifth starts a new run on w1.
    expect(placeGroup(s, 5)).toEqual(["w1", "w1", "w2", "w2", "w1"]);
  });

  // Mutant L14 (placement.ts, decideWorkerRootishQueuingDisabled): between
  // workers equally occupied, the one holding more data chosen.
  test("a run starts on the worker holding less data when occupancies tie", () => {
    const s = noQueue();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateData("c", { d: ["w1"] }));
    expect(placeGroup(s, 5)).toEqual(["w2", "w2", "w1", "w1", "w2"]);
  });
});

// Mutant L06 (placement.ts, Best.consider): among workers that would start
// the task equally soon, the one with more tasks per thread preferred.
test("equal start times go to the worker with fewer tasks per thread", () => {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
  s.handleStimulus(t.updateData("c", { x: ["w3"] }));
  // w3, holding x, is busy.
  s.handleStimulus(t.updateGraph("c", { b: t.task([], { workers: ["w3"] }) }, ["b"]));
  // w1 runs a task that seceded: no occupancy, but a task on its one thread.
  s.handleStimulus(t.updateGraph("c", { lr: t.task([], { workers: ["w1"] }) }, ["lr"]));
  const lr = s.tasks.get("lr");
  s.handleStimulus(
    t.fromWorker("w1", { op: "long-running", key: "lr", computeDuration: null, runId: lr?.runId }),
  );
  expect(s.workers.get("w1")?.occupancy).toBe(0);
  expect(s.workers.get("w2")?.occupancy).toBe(0);
  // y needs x: moving it costs the same to w1 and w2, and w3 is busier than that.
  const out = s.handleStimulus(t.updateGraph("c", { y: t.task(["x"]) }, ["y"]));
  expect(t.computeTasks(out).map((c) => c.worker)).toEqual(["w2"]);
  s.validateState();
});
