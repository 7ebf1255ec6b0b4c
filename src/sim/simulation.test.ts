import { describe, expect, test } from "vitest";
import type { RestartedMsg } from "../protocol/messagesClient.ts";
import { chainGraph, mapGraph, shuffleGraph, treeGraph } from "./benchmarkGraphs.ts";
import { EventQueue } from "./eventQueue.ts";
import { startFaults } from "./faultInjector.ts";
import { formatFaults, NO_FAULTS, parseFaults } from "./faults.ts";
import { graphWorkload } from "./graphWorkload.ts";
import type { SimHooks } from "./hooks.ts";
import { SIM_DEFAULTS } from "./options.ts";
import { randomDag, SIM_HOSTS } from "./randomDag.ts";
import { replayCommand } from "./replay.ts";
import { formatRunLine } from "./report.ts";
import { SimRng } from "./rng.ts";
import { shrink } from "./shrink.ts";
import { Simulation, simulate } from "./simulation.ts";
import { computeValue, expectedValues } from "./values.ts";

describe("SimRng", () => {
  test("the same seed gives the same sequence, another seed another", () => {
    const a = new SimRng(42);
    const b = new SimRng(42);
    const c = new SimRng(43);
    const xs = Array.from({ length: 5 }, () => a.next32());
    expect(Array.from({ length: 5 }, () => b.next32())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next32())).not.toEqual(xs);
  });
  test("a run's seed: as the constructor below 2**32, no collision above", () => {
    const seq = (r: SimRng) => Array.from({ length: 5 }, () => r.next32());
    for (const seed of [0, 1, 7, 2 ** 31, 2 ** 32 - 1]) {
      expect(seq(SimRng.forSeed(seed))).toEqual(seq(new SimRng(seed)));
    }
    // The constructor folds the words: 2**32 is seed 1 there, 2**32 + 1 seed 0.
    expect(seq(new SimRng(2 ** 32))).toEqual(seq(new SimRng(1)));
    const seen = new Set<string>();
    for (const seed of [0, 1, 2, 3, 2 ** 32, 2 ** 32 + 1, 2 ** 32 + 2, 2 ** 33, 2 ** 33 + 2]) {
      seen.add(seq(SimRng.forSeed(seed)).join());
    }
    expect(seen.size).toBe(9);
    const run = (seed: number) => JSON.stringify(simulate({ seed }).stats);
    expect(run(2 ** 32)).not.toBe(run(1));
  });
  test("sample gives every item, each once, when asked for more than there are", () => {
    const r = new SimRng(3);
    const got = r.sample(["a", "b", "c"], 5);
    expect(got).toHaveLength(3);
    expect([...got].sort()).toEqual(["a", "b", "c"]);
    expect(r.sample([], 2)).toEqual([]);
  });
  test("random() is in [0, 1) and int(n) in [0, n)", () => {
    const r = new SimRng(7);
    for (let i = 0; i < 1000; i++) {
      const x = r.random();
      expect(x >= 0 && x < 1).toBe(true);
      const n = r.int(5);
      expect(Number.isInteger(n) && n >= 0 && n < 5).toBe(true);
    }
  });
});

describe("EventQueue", () => {
  test("fires by time, then in scheduling order", () => {
    const q = new EventQueue();
    const seen: string[] = [];
    q.at(2, () => seen.push("c"));
    q.at(1, () => seen.push("a"));
    q.at(1, () => seen.push("b"));
    q.at(0, () => q.at(1, () => seen.push("b2")));
    while (q.step()) {}
    expect(seen).toEqual(["a", "b", "b2", "c"]);
    expect(q.now).toBe(2);
  });
  test("counts pending work apart from periodic housekeeping", () => {
    const q = new EventQueue();
    q.at(1, () => {}, true);
    q.at(1, () => {});
    expect(q.pendingWork).toBe(1);
    q.step();
    q.step();
    expect(q.pendingWork).toBe(0);
  });
  test("rejects a negative delay, and one that is not a number", () => {
    expect(() => new EventQueue().at(-1, () => {})).toThrow(RangeError);
    // A NaN time would sit anywhere in the heap, out of order with everything.
    expect(() => new EventQueue().at(Number.NaN, () => {})).toThrow(RangeError);
  });
  test("an absolute time already past fires now: the clock never runs backwards", () => {
    const q = new EventQueue();
    const times: number[] = [];
    q.at(5, () => q.atTime(2, () => times.push(q.now)));
    q.at(6, () => times.push(q.now));
    while (q.step()) {}
    expect(times).toEqual([5, 6]);
  });
});

describe("faults", () => {
  test("parse and format round-trip", () => {
    expect(formatFaults(parseFaults("all"))).toBe("all");
    expect(formatFaults(parseFaults("none"))).toBe("none");
    expect(parseFaults("death,network=0.5")).toEqual({ ...NO_FAULTS, death: 0.8, network: 0.5 });
    expect(formatFaults(parseFaults("death,network=0.5"))).toBe("death,network=0.5");
    expect(() => parseFaults("meteor")).toThrow(/unknown fault 'meteor'/);
    expect(() => parseFaults("death=-1")).toThrow(/bad rate/);
  });
  test("a fault that is off has no timer and draws nothing from the run's stream", () => {
    const started = (faults: typeof NO_FAULTS) => {
      const sim = new Simulation({ seed: 1, faults });
      startFaults(sim);
      return { timers: sim.queue.size, next: sim.rng.next32() };
    };
    const fresh = new Simulation({ seed: 1, faults: NO_FAULTS }).rng.next32();
    expect(started(NO_FAULTS)).toEqual({ timers: 0, next: fresh });
    const death = started({ ...NO_FAULTS, death: 1 });
    expect(death.timers).toBe(1);
    expect(death.next).not.toBe(fresh);
  });
});

describe("workloads", () => {
  test("benchmark graphs have the documented shapes", () => {
    expect(mapGraph(10_000).tasks.length).toBe(10_000);
    expect(treeGraph(8_192).tasks.length).toBe(16_383);
    expect(shuffleGraph(64).tasks.length).toBe(64 + 64 * 64 + 64);
    expect(chainGraph(2_000).wanted).toEqual([1_999]);
  });
  test("values depend on the key and the inputs, in order", () => {
    expect(computeValue("a", [1, 2])).not.toBe(computeValue("a", [2, 1]));
    expect(computeValue("a", [])).not.toBe(computeValue("b", []));
    const w = chainGraph(3);
    const v = expectedValues(w);
    expect(v[2]).toBe(computeValue("chain-2", [computeValue("chain-1", [v[0]])]));
  });
});

describe("randomDag", () => {
  test("builds exactly the tasks asked for, each input once and earlier in the list", () => {
    for (const tasks of [1, 2, 7, 50]) {
      const w = randomDag(
        { tasks, width: 3, fanIn: 6, restricted: 0, maxBytes: 100 },
        new SimRng(tasks),
      );
      expect(w.tasks).toHaveLength(tasks);
      w.tasks.forEach((t, i) => {
        expect(new Set(t.deps).size, t.key).toBe(t.deps.length);
        for (const d of t.deps) expect(d).toBeLessThan(i);
      });
    }
  });
});

describe("simulate", () => {
  test("the same seed replays event for event", () => {
    const a = simulate({ seed: 11 });
    const b = simulate({ seed: 11 });
    expect(a.ok).toBe(true);
    expect(b.stats).toEqual(a.stats);
    expect(simulate({ seed: 12 }).stats).not.toEqual(a.stats);
  });
  test("a key fired and forgotten runs to its end once released, and is then let go", () => {
    let fired = 0;
    let checked = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const sim = new Simulation({ seed, fireAndForget: 1, restart: 0, releasePhase: false });
      const r = sim.run();
      expect(r.ok, r.failure?.message).toBe(true);
      fired += sim.client.fired.length;
      for (const key of sim.client.fired) {
        // Released by the client, it still ran to its end (these runs lose no scattered data).
        const reached = sim.scheduler.state.story(key).map((entry) => entry[2]);
        if (reached.length === 0) continue; // fired before the batch asking for it: never sent
        checked++;
        expect(reached.includes("memory") || reached.includes("erred"), `${key}: ${reached}`).toBe(
          true,
        );
      }
      expect(sim.scheduler.state.clients.get("fire-and-forget")?.wantsWhat.size ?? 0).toBe(0);
    }
    expect(fired).toBeGreaterThan(20);
    expect(checked).toBeGreaterThan(15);
    expect(simulate({ seed: 1, fireAndForget: 0.5 }).command).toContain("--fire-and-forget 0.5");
    expect(() => simulate({ seed: 1, fireAndForget: 2 })).toThrow(/fireAndForget must be/);
  });
  test("a client that restarts the cluster, or one worker, gets every answer", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const sim = new Simulation({ seed, workload: "mix", restart: 1 });
      const r = sim.run();
      expect(r.ok, r.failure?.message).toBe(true);
      expect(r.stats.restarts).toBe(1);
      // Every worker closed and was replaced: the scheduler has none of the first ones.
      expect(r.workers).toBeGreaterThanOrEqual(2 * 4);
      expect(formatRunLine(r)).toContain(", restarted");
    }
    let restartedOne = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const r = simulate({ seed, workload: "mix", restartWorker: 1, restart: 0 });
      expect(r.ok, r.failure?.message).toBe(true);
      expect(r.stats.workerRestarts).toBeLessThanOrEqual(1);
      restartedOne += r.stats.workerRestarts;
      if (r.stats.workerRestarts === 1) expect(formatRunLine(r)).toContain(", 1 worker restarted");
    }
    expect(restartedOne).toBeGreaterThan(15);
    expect(simulate({ seed: 1, restartWorker: 0.5 }).command).toContain("--restart-worker 0.5");
    // The scatter workload does not restart: its values would be lost for good.
    expect(simulate({ seed: 1, workload: "scatter", restart: 1 }).stats.restarts).toBe(0);
    expect(simulate({ seed: 1, restart: 0.5 }).command).toContain("--restart 0.5");
    expect(() => simulate({ seed: 1, restart: -1 })).toThrow(/restart must be/);
  });
  test.each(["map", "tree", "shuffle", "chain", "configured"] as const)(
    "%s completes without faults",
    (w) => {
      const r = simulate({ seed: 3, workload: w, tasks: 16, faults: NO_FAULTS });
      expect(r.ok, r.failure?.message).toBe(true);
    },
  );
  test("pinned: random DAGs with workers= restrictions, complete with and without faults", () => {
    const spec = { tasks: 60, width: 8, fanIn: 3, restricted: 0.15, maxBytes: 1000 };
    const plain = randomDag(spec, new SimRng(9));
    // pinned: 0 draws nothing more: the random workload's seeds stay as they were.
    expect(randomDag({ ...spec, pinned: 0 }, new SimRng(9))).toEqual(plain);
    const pinned = randomDag({ ...spec, pinned: 0.4 }, new SimRng(9)).tasks;
    const loose = pinned.filter((t) => t.allowOtherWorkers === true);
    const strict = pinned.filter((t) => t.workers !== undefined && t.allowOtherWorkers !== true);
    expect(loose.length).toBeGreaterThan(5);
    expect(strict.length).toBeGreaterThan(2);
    for (const t of loose) expect(SIM_HOSTS).toContain(t.workers?.[0]);
    for (const t of strict) expect(t.workers).toEqual(SIM_HOSTS);
    for (const seed of [1, 2, 3]) {
      const r = simulate({ seed, workload: "pinned", tasks: 30 });
      expect(r.ok, r.failure?.message).toBe(true);
      expect(r.workload).toBe("pinned(30)");
    }
    expect(simulate({ seed: 4, workload: "pinned", faults: NO_FAULTS }).ok).toBe(true);
  });
  test("the replay command names every option that differs from its default", () => {
    const r = simulate({ seed: 5, workers: 2, tasks: 10, faults: parseFaults("death") });
    expect(r.command).toBe("weft sim --seed 5 --tasks 10 --workers 2 --faults death");
    expect(replayCommand({ ...SIM_DEFAULTS, seed: 1 })).toBe("weft sim --seed 1");
  });
  test("rounds of work stealing and of the active memory manager run at their intervals", () => {
    const rounds = (o: { workStealingInterval?: number; activeMemoryManagerInterval?: number }) => {
      const sim = new Simulation({ seed: 2, tasks: 30, faults: NO_FAULTS, ...o });
      const counted = { balance: 0, reduceReplicas: 0 };
      const { balance, reduceReplicas } = sim.scheduler;
      sim.scheduler.balance = () => {
        counted.balance++;
        balance.call(sim.scheduler);
      };
      sim.scheduler.reduceReplicas = () => {
        counted.reduceReplicas++;
        reduceReplicas.call(sim.scheduler);
      };
      const r = sim.run();
      expect(r.ok, r.failure?.message).toBe(true);
      return { ...counted, time: r.stats.virtualTime, command: r.command };
    };
    const near = (count: number, time: number, interval: number) => {
      expect(Math.abs(count - time / interval)).toBeLessThanOrEqual(1);
    };
    const defaults = rounds({});
    near(defaults.balance, defaults.time, 0.1);
    near(defaults.reduceReplicas, defaults.time, 2);
    const often = rounds({ workStealingInterval: 0.01, activeMemoryManagerInterval: 0.05 });
    near(often.balance, often.time, 0.01);
    near(often.reduceReplicas, often.time, 0.05);
    expect(often.command).toBe(
      "weft sim --seed 2 --tasks 30 --faults none --work-stealing-interval 0.01 --active-memory-manager-interval 0.05",
    );
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => simulate({ seed: 1, workStealingInterval: bad })).toThrow(
        /workStealingInterval must be a finite number > 0/,
      );
      expect(() => simulate({ seed: 1, activeMemoryManagerInterval: bad })).toThrow(
        /activeMemoryManagerInterval must be a finite number > 0/,
      );
    }
  });
  test("the replay command gives threads, validation, the release phase, and allowedFailures too", () => {
    expect(
      replayCommand({
        ...SIM_DEFAULTS,
        seed: 1,
        maxThreads: 3,
        validate: false,
        releasePhase: false,
        allowedFailures: 5,
      }),
    ).toBe(
      "weft sim --seed 1 --max-threads 3 --no-validate --no-release (not weft sim flags: allowedFailures=5)",
    );
  });
  test("the replay command names the options weft sim has no flag for, rather than pass for a replay", () => {
    // stallTimeout 10 turns the variant's deadlock at t≈60 s into one at t≈10 s:
    // `weft sim --seed 3 --variant drop-task-finished --faults none` is another run.
    const o = { seed: 3, variant: "drop-task-finished", faults: NO_FAULTS };
    const r = simulate({ ...o, stallTimeout: 10, heartbeatTimeout: 3 });
    expect(r.ok).toBe(false);
    expect(r.stats.virtualTime).not.toBe(simulate(o).stats.virtualTime);
    expect(r.command).toBe(
      "weft sim --seed 3 --variant drop-task-finished --faults none (not weft sim flags: heartbeatTimeout=3, stallTimeout=10)",
    );
    const hooked = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS, hooks: {} });
    expect(hooked.command).toBe(
      "weft sim --seed 1 --tasks 4 --faults none (not weft sim flags: custom hooks)",
    );
  });
  test("rejects bad options", () => {
    expect(() => simulate({ seed: -1 })).toThrow(RangeError);
    expect(() => simulate({ seed: 1, workers: 0 })).toThrow(/workers/);
    // Too large to hold: refused at once, rather than running out of memory minutes later.
    expect(() => simulate({ seed: 1, workload: "map", tasks: 100_000_000 })).toThrow(
      /^tasks: a map workload of 100000000 builds about 200000000 tasks; at most 4000000 /,
    );
    expect(() => simulate({ seed: 1, workload: "shuffle", tasks: 3_000 })).toThrow(
      /builds about 9006000 tasks/,
    );
    expect(() => simulate({ seed: 1, variant: "nope" })).toThrow(/unknown variant/);
    expect(() => simulate({ seed: 1, variant: "nope" })).toThrow(RangeError);
    // NaN turned the livelock guard off; 0 or less failed every run at once as a livelock.
    for (const maxEvents of [Number.NaN, 0, -5, 1.5]) {
      expect(() => simulate({ seed: 1, maxEvents })).toThrow(/maxEvents must be an integer ≥ 1/);
    }
    // From JavaScript (no type check): a TypeError from deep inside the run, before.
    expect(() => simulate({ seed: 1, workload: "foo" as "map" })).toThrow(
      /workload must be one of random, map, tree, shuffle, chain, mix, pinned, configured, scatter, got foo/,
    );
  });
  test("a run that outlasts maxTime or maxEvents is given up as a livelock", () => {
    const slow = simulate({ seed: 1, faults: NO_FAULTS, maxTime: 0.05 });
    expect(slow.failure?.kind).toBe("livelock");
    expect(slow.failure?.message).toMatch(/^gave up after \d+ events at t=0\.\d+$/);
    // The first event past the limit stops it, well before the run would have finished.
    expect(slow.stats.virtualTime).toBeGreaterThan(0.05);
    expect(slow.stats.virtualTime).toBeLessThan(
      simulate({ seed: 1, faults: NO_FAULTS }).stats.virtualTime,
    );
    const long = simulate({ seed: 1, faults: NO_FAULTS, maxEvents: 50 });
    expect(long.failure?.kind).toBe("livelock");
    expect(long.failure?.message).toMatch(/^gave up after 50 events at /);
  });
  test("a graph longer than the default maxTime runs to its end: the default limits grow with the workload", () => {
    // 400 tasks of 10 virtual seconds one after the other: 4,000 s, past the 3,600 s default.
    const graph: Record<string, unknown> = { "c-0": ["load", 0] };
    for (let i = 1; i < 400; i++) graph[`c-${i}`] = ["inc", `c-${i - 1}`];
    const workload = graphWorkload(graph, { duration: 10 });
    const r = simulate({ seed: 1, workload, faults: NO_FAULTS, validate: false });
    expect(r.failure).toBeNull();
    expect(r.stats.virtualTime).toBeGreaterThan(SIM_DEFAULTS.maxTime);
    expect(r.command).not.toContain("maxTime");
    // A limit set otherwise than the default is kept.
    const cut = simulate({ seed: 1, workload, faults: NO_FAULTS, validate: false, maxTime: 3_000 });
    expect(cut.failure?.message).toMatch(/^gave up after \d+ events at t=3000\.\d+$/);
    expect(cut.command).toContain("maxTime=3000");
  });
  test("a run given up at a limit its workload raised says where the limit came from", () => {
    // 40 tasks of 100 virtual seconds nearly always rescheduled: a livelock past the
    // 12,000-odd seconds three times the chain allows, not at the 3,600 of the options.
    const graph: Record<string, unknown> = { "c-0": ["load", 0] };
    for (let i = 1; i < 40; i++) graph[`c-${i}`] = ["inc", `c-${i - 1}`];
    const workload = graphWorkload(graph, { duration: 100, nbytes: 0 });
    const r = simulate({
      seed: 1,
      workload,
      faults: { ...NO_FAULTS, reschedule: 0.95 },
      validate: false,
      workers: 1,
    });
    expect(r.failure?.kind).toBe("livelock");
    expect(r.failure?.message).toMatch(
      /^gave up after \d+ events at t=120\d\d\.\d+ \(past this workload's limit of 120\d\d(\.\d+)? virtual seconds, three times its tasks run one after another\)$/,
    );
  });
  test("a graph of tasks longer than the default no-progress window runs to its end: the window grows with its longest task", () => {
    // Two tasks of 70 virtual seconds (up to 105 s as run), one after the other: no
    // progress for longer than the 60 s default while each runs, and no deadlock.
    const graph = { a: ["load", 1], b: ["inc", "a"] };
    const long = graphWorkload(graph, { duration: 70 });
    const r = simulate({ seed: 1, workload: long, faults: NO_FAULTS });
    expect(r.failure).toBeNull();
    expect(r.stats.virtualTime).toBeGreaterThan(SIM_DEFAULTS.stallTimeout);
    // Results that take longer than the window to send alike (10 GB at 100 MB/s: 100 s),
    // eight gathered from two workers into one sum.
    const gathered: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) gathered[`l${i}`] = ["load", i];
    gathered.s = ["sum", Array.from({ length: 8 }, (_, i) => `l${i}`)];
    const big = graphWorkload(gathered, { nbytes: 10e9 });
    const sent = simulate({ seed: 1, workload: big, faults: NO_FAULTS, workers: 2, maxThreads: 1 });
    expect(sent.failure).toBeNull();
    expect(sent.stats.transfers).toBeGreaterThan(0);
    // A window set otherwise than the default is kept: a real stall is still one.
    const cut = simulate({ seed: 1, workload: long, faults: NO_FAULTS, stallTimeout: 30 });
    expect(cut.failure?.message).toMatch(/^no progress for 30 virtual seconds: /);
    expect(cut.command).toContain("stallTimeout=30");
  });
  test("a transfer the slow fault slows a hundred times does not pass for a stall: the window grows with it", () => {
    // Eight 1 GB results (10 s each at 100 MB/s) gathered into one sum, every link
    // slowed 10-100 times: a transfer of up to 1,000 s, past ten times the longest task.
    const gathered: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) gathered[`l${i}`] = ["load", i];
    gathered.s = ["sum", Array.from({ length: 8 }, (_, i) => `l${i}`)];
    const big = graphWorkload(gathered, { nbytes: 1e9 });
    const faults = { ...NO_FAULTS, slow: 1 };
    for (const seed of [1, 2, 3]) {
      const r = simulate({ seed, workload: big, faults, workers: 2, maxThreads: 1 });
      expect(r.failure, `seed ${seed}`).toBeNull();
      expect(r.stats.faults.slow, `seed ${seed}`).toBeGreaterThan(0);
    }
    // The seed of `weft sim --bandwidth 1MB` that ended "livelock" with every default fault.
    expect(simulate({ seed: 2, bandwidth: 1e6 }).failure).toBeNull();
  });
  test("a round of the active memory manager reaches the scheduler only while some key is held twice", () => {
    let rounds = 0;
    let idle = 0;
    const hooks: SimHooks = {
      schedulerStimulus: (ctx, ev) => {
        if (ev.kind === "reduce-replicas") {
          rounds++;
          if (ctx.scheduler.replicatedTasks.size === 0) idle++;
        }
        return ev;
      },
    };
    const r = simulate({
      seed: 2,
      tasks: 30,
      faults: NO_FAULTS,
      activeMemoryManagerInterval: 0.05,
      hooks,
    });
    expect(r.ok, r.failure?.message).toBe(true);
    expect(rounds).toBeGreaterThan(0);
    expect(idle).toBe(0);
  });
  test("a restarted answer to no restart of the client's own fails the run", () => {
    let forged = false;
    const hooks: SimHooks = {
      schedulerMessage: (_ctx, m) => {
        if (forged || m.to.kind !== "client" || m.msg.op !== "key-in-memory") return m;
        forged = true;
        const msg: RestartedMsg = {
          op: "restarted",
          workers: [],
          nannies: [],
          stimulusId: "forged",
        };
        return { to: m.to, msg };
      },
    };
    const r = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS, restart: 0, hooks });
    expect(r.failure?.kind).toBe("lost");
    expect(r.failure?.message).toBe("the client got restarted (forged) for no restart of its own");
  });
  test("a release phase that never settles fails after stallTimeout, not at maxTime", () => {
    // As the client closes, a worker dies, and the scheduler never removes it.
    let sim: Simulation | null = null;
    const hooks: SimHooks = {
      schedulerStimulus: (_ctx, ev) => {
        if (ev.kind === "remove-worker") return null;
        if (ev.kind === "client-message" && ev.msg.op === "close-client" && sim !== null) {
          sim.kill(sim.liveWorkers()[0]);
        }
        return ev;
      },
    };
    sim = new Simulation({
      seed: 1,
      tasks: 4,
      faults: NO_FAULTS,
      stallTimeout: 5,
      maxTime: 100,
      hooks,
    });
    const r = sim.run();
    expect(r.failure?.kind).toBe("deadlock");
    expect(r.failure?.message).toMatch(
      /: the cluster did not settle after the client released everything; stuck: /,
    );
    expect(r.stats.virtualTime).toBeLessThan(10);
  });
  test("a worker cut off, or retired, after it was killed is replaced once", () => {
    const sim = new Simulation({ seed: 1, tasks: 4, workers: 2, faults: NO_FAULTS });
    expect(sim.run().ok).toBe(true);
    const started = sim.workers.size;
    const w = sim.liveWorkers()[0];
    sim.partition(w);
    sim.kill(w);
    const until = sim.queue.now + 4 * sim.options.heartbeatTimeout;
    while (sim.queue.peekTime() < until) sim.queue.step();
    expect(sim.workers.size).toBe(started + 1);
    // A worker the scheduler retires after it died is not replaced a second time.
    const v = sim.liveWorkers()[0];
    sim.kill(v);
    sim.closeRetired(v);
    const later = sim.queue.now + 2 * sim.options.replaceDelay;
    while (sim.queue.peekTime() < later) sim.queue.step();
    expect(sim.workers.size).toBe(started + 2);
  });
  test("shrinking a failure of the largest seed tries no seed beyond it", () => {
    // With one worker nothing is gathered: the candidate passes on the seed, and the
    // shrinker went on to seed 2**53, which simulate refuses with a RangeError.
    const seed = Number.MAX_SAFE_INTEGER;
    const failing = simulate({ seed, variant: "drop-gather-completion", faults: NO_FAULTS });
    expect(failing.failure?.kind).toBe("deadlock");
    const s = shrink(failing, { budget: 3 });
    expect(s.tried).toBe(3);
    expect(s.smallest.seed).toBe(seed);
  });
  test("shrinking finds a smaller failing case of the same kind", () => {
    const failing = simulate({ seed: 1, variant: "wrong-value", workers: 6, tasks: 40 });
    expect(failing.failure?.kind).toBe("wrong-value");
    const s = shrink(failing, { budget: 30 });
    expect(s.smallest.failure?.kind).toBe("wrong-value");
    expect(s.smallest.options.workers * 1000 + s.smallest.options.tasks).toBeLessThan(
      6 * 1000 + 40,
    );
  });
});
