import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import {
  AcquireReplicasEvent,
  ExecuteSuccessEvent,
  type StateMachineEvent,
} from "../worker/state/events.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import type { Worker } from "../worker/worker.ts";
import { Adaptive, type AdaptOptions } from "./adaptive.ts";
import type { LocalCluster } from "./localCluster.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** The workers the scheduler has. */
function registered(cluster: LocalCluster): number {
  return cluster.scheduler.state.workers.size;
}

describe("LocalCluster.scale", () => {
  it("starts workers, and retires them keeping their results", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await cluster.scale(3);
    expect(registered(cluster)).toBe(3);
    expect(cluster.workerCount).toBe(3);
    // Named as Dask's LocalCluster names its workers: by a count of those made.
    expect(cluster.workers.map((w) => w.options.name)).toEqual(["0", "1", "2"]);
    const futures = ["0", "1", "2"].map((name, i) => client.submitWith({ workers: name }, inc, i));
    expect(await client.gather(futures)).toEqual([1, 2, 3]);
    await cluster.scale(1);
    expect(registered(cluster)).toBe(1);
    expect(cluster.workerCount).toBe(1);
    // The retired workers closed without a fault and were not replaced; the results moved.
    const closed = cluster.workers.filter((w) => w.status === "closed");
    expect(closed).toHaveLength(2);
    for (const w of closed) expect(w.fault).toBeNull();
    expect(await client.gather(futures)).toEqual([1, 2, 3]);
    // Scaling up again reuses the closed workers' slots.
    await cluster.scale(2);
    expect(registered(cluster)).toBe(2);
    expect(cluster.workers).toHaveLength(3);
    // A new name, never one a retired worker had.
    const names = (await client.workers()).map((w) => w.name).sort();
    expect(names).toHaveLength(2);
    expect(names[1]).toBe("3");
    expect(await client.submit(inc, 41)).toBe(42);
  });

  it("to 0 once nothing is held; from 0 at the start", async () => {
    const { cluster, client } = await testCluster({ workers: 0 });
    expect(registered(cluster)).toBe(0);
    await cluster.scale(1);
    const f = client.submit(inc, 1);
    expect(await f).toBe(2);
    // The last worker holds f's result, which no other can take: it stays.
    await cluster.scale(0);
    expect(registered(cluster)).toBe(1);
    f.release();
    await eventually(() => cluster.scheduler.state.tasks.size === 0, 5000, "f forgotten");
    await cluster.scale(0);
    expect(registered(cluster)).toBe(0);
    await expect(cluster.scale(-1)).rejects.toThrow("scale: n must be an integer ≥ 0, got -1");
    await expect(cluster.scale(1.5)).rejects.toThrow(RangeError);
  });
});

describe("LocalCluster.scale with a worker of its scheduler it did not start", () => {
  it("retires only its own workers", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const external = await extraWorker(cluster);
    try {
      // Its own workers hold results; the other, holding none, was retired first.
      const held = ["0", "1"].map((name, i) => client.submitWith({ workers: name }, inc, i));
      expect(await client.gather(held)).toEqual([1, 2]);
      await cluster.scale(1);
      expect(cluster.workerCount).toBe(1);
      expect(external.status).toBe("running");
      expect(registered(cluster)).toBe(2);
      expect(await client.gather(held)).toEqual([1, 2]);
    } finally {
      await external.close();
    }
  });
});

describe("LocalCluster.scale during a retirement", () => {
  it("counts out the workers being retired: they are leaving", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [leaving, staying] = cluster.workers;
    const f = client.submitWith({ workers: ["0"] }, inc, 1);
    expect(await f).toBe(2);
    // Hold the copy the retirement asks for, so that it stays under way.
    const held: StateMachineEvent[] = [];
    const handle = staying.handleStimuli.bind(staying);
    staying.handleStimuli = (stims) => {
      held.push(...stims.filter((stim) => stim instanceof AcquireReplicasEvent));
      handle(stims.filter((stim) => !(stim instanceof AcquireReplicasEvent)));
    };
    const retired = client.retireWorkers([leaving.address]);
    await eventually(() => held.length > 0, 5000, "the copy asked for");
    // Counted, the worker leaving made the cluster look scaled already: it ended with one.
    await cluster.scale(2);
    expect(registered(cluster)).toBe(3);
    staying.handleStimuli = handle;
    handle(held);
    expect((await retired).retired).toEqual([leaving.address]);
    await leaving.closed;
    expect(registered(cluster)).toBe(2);
    expect(cluster.workerCount).toBe(2);
    expect(await f).toBe(2);
  });
});

/** Promises holding the start of the workers named so (see {@link holdModule}). */
const holds = new Map<string, Promise<void>>();
(globalThis as { weftTestHolds?: typeof holds }).weftTestHolds = holds;
const holdDir = mkdtempSync(join(tmpdir(), "weft-scale-hold-"));
afterAll(() => rmSync(holdDir, { recursive: true, force: true }));
afterEach(() => holds.clear());

/** A preload module holding a worker's start while {@link holds} has a promise for its name. */
const holdModule = join(holdDir, "hold.mjs");
writeFileSync(
  holdModule,
  "export async function weftSetup(w) { await globalThis.weftTestHolds?.get(w.options.name); }\n",
);

/** Hold the start of workers named `names` until released, or failed (their start rejects). */
function hold(...names: string[]): { release(): void; fail(why: string): void } {
  let release = () => {};
  let fail = (_why: string) => {};
  const held = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = (why) => reject(new Error(why));
  });
  held.catch(() => {}); // rejected with no worker waiting: not unhandled
  for (const name of names) holds.set(name, held);
  return { release, fail };
}

describe("LocalCluster closing while it scales or connects a client", () => {
  it("scale racing close() rejects saying the cluster is closed", async () => {
    const { cluster } = await testCluster({ workers: 1, worker: { preload: [holdModule] } });
    const held = hold("1", "2");
    const scaled = cluster.scale(3);
    await eventually(() => cluster.workerCount === 3, 5_000, "two workers starting");
    const closing = cluster.close();
    await sleep(20);
    held.release(); // a worker's close waits for its preload
    await closing;
    // Not "a worker failed to start: the worker was closed while starting": the close is the news.
    await expect(scaled).rejects.toThrow(/^the LocalCluster is closed$/);
    // Scaling down: the close may come before, during or after the retirement.
    for (const delayMs of [0, 1, 5]) {
      const { cluster } = await testCluster({ workers: 3 });
      const down = cluster.scale(1).then(
        () => null,
        (e: unknown) => e as Error,
      );
      await sleep(delayMs);
      await cluster.close();
      const err = await down;
      if (err !== null) expect(err.message).toBe("the LocalCluster is closed");
    }
  });

  it("client() racing close() rejects instead of resolving with a closed client", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const connecting = cluster.client();
    await cluster.close();
    await expect(connecting).rejects.toThrow("the LocalCluster is closed");
    await expect(cluster.client()).rejects.toThrow("the LocalCluster is closed");
  });
});

describe("LocalCluster.scale while workers are replaced", () => {
  /** A stimulus the state machine rejects (a result for a task it never had): a bug's stand-in. */
  const breakWorker = (w: Worker) =>
    w.handleStimulus(ExecuteSuccessEvent.dummy("never-given", { stimulusId: "test-fault" }));

  /** Workers whose close takes a while: their plugin's teardown is slow. */
  async function slowToClose(cluster: LocalCluster, ms: number): Promise<void> {
    for (const w of cluster.workers) {
      await w.addPlugin({ teardown: () => sleep(ms) }, "slow-teardown");
    }
  }

  it("counts a worker closing for a restart: its replacement is coming", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    await slowToClose(cluster, 200);
    const restarted = client.restart();
    await eventually(() => cluster.workers.every((w) => w.status === "closing"), 5_000, "closing");
    expect(cluster.workerCount).toBe(2);
    await cluster.scale(2);
    await restarted;
    await sleep(100);
    expect(cluster.workerCount).toBe(2);
    expect(registered(cluster)).toBe(2);
    expect(cluster.workers.map((w) => w.options.name)).toEqual(["0", "1"]);
  });

  it("a new worker does not take the slot of a worker whose restart's replacement is starting", async () => {
    const { cluster, client } = await testCluster({
      workers: 2,
      worker: { preload: [holdModule] },
    });
    const held = hold("0");
    const old0 = cluster.workers[0];
    const restarted = client.restart();
    await old0.closed;
    await sleep(20); // its replacement is held in its preload
    expect(cluster.workers[0]).toBe(old0);
    await cluster.scale(3);
    // The new worker took a slot of its own, not slot 0, which stays the replacement's.
    expect(cluster.workers.map((w) => w.options.name)).toEqual(["0", "1", "2"]);
    expect(cluster.workers[0]).toBe(old0);
    held.release();
    await restarted;
    await eventually(() => cluster.workers[0] !== old0, 5_000, "the replacement in slot 0");
    await eventually(() => registered(cluster) === 3, 5_000, "three workers");
    expect(cluster.workers.map((w) => w.status)).toEqual(["running", "running", "running"]);
    // Every worker the scheduler has is one of the cluster's, which close() closes.
    const addresses = new Set(cluster.workers.map((w) => w.address));
    for (const address of cluster.scheduler.state.workers.keys()) {
      expect(addresses.has(address)).toBe(true);
    }
    expect(cluster.workerCount).toBe(3);
  });

  it("counts a worker closing on a fault while its slot has restarts left, not once they are used up", async () => {
    const { cluster } = await testCluster({ workers: 2, maxWorkerRestarts: 1 });
    /** Slot 0's worker, stopping on a fault (slowly: its close takes 200 ms). */
    const faultSlot0 = async (): Promise<Worker> => {
      await slowToClose(cluster, 200);
      const w = cluster.workers[0];
      breakWorker(w);
      expect(w.status).toBe("closing");
      return w;
    };
    const victim = await faultSlot0();
    expect(cluster.workerCount).toBe(2);
    await cluster.scale(2);
    await eventually(() => cluster.workers[0] !== victim, 5_000, "a replacement");
    expect(registered(cluster)).toBe(2);
    expect(cluster.workerCount).toBe(2);
    // The slot's one restart is used up: its next fault leaves the worker out of the count.
    await faultSlot0();
    expect(cluster.workerCount).toBe(1);
    await cluster.scale(2);
    expect(cluster.workerCount).toBe(2);
    // The faulted worker leaves the scheduler once it has closed.
    await eventually(() => registered(cluster) === 2, 5_000, "two workers");
    await sleep(100);
    expect(registered(cluster)).toBe(2);
  });

  it("the last running worker given up on while scale starts others: the cluster stays, as they start", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      maxWorkerRestarts: 0,
      worker: { preload: [holdModule] },
    });
    const held = hold("1", "2");
    const scaled = cluster.scale(3);
    await eventually(() => cluster.workerCount === 3, 5_000, "two workers starting");
    breakWorker(cluster.workers[0]);
    await cluster.workers[0].closed;
    await sleep(50);
    expect(cluster.scheduler.status).not.toBe("closed");
    held.release();
    await scaled;
    expect(client.isClosed).toBe(false);
    expect(registered(cluster)).toBe(2);
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it("the last running worker given up on while scale starts others that fail: the cluster closes", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      maxWorkerRestarts: 0,
      worker: { preload: [holdModule] },
    });
    const held = hold("1");
    const scaled = cluster.scale(2);
    await eventually(() => cluster.workerCount === 2, 5_000, "a worker starting");
    const pending = client.submit(slowInc, 1, 60_000);
    breakWorker(cluster.workers[0]);
    await cluster.workers[0].closed;
    await sleep(50);
    expect(cluster.scheduler.status).not.toBe("closed");
    held.fail("no start");
    await expect(scaled).rejects.toThrow(/scale: a worker failed to start: .*no start/);
    await expect(pending).rejects.toThrow(/no worker of the LocalCluster is left running/);
    await eventually(() => cluster.scheduler.status === "closed", 5_000, "the cluster closed");
  });
});

describe("LocalCluster.adapt", () => {
  it("grows with the work, then shrinks back to the minimum", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const adaptive = cluster.adapt({
      minimum: 1,
      maximum: 4,
      intervalMs: 20,
      waitCount: 3,
      targetDurationMs: 100,
    });
    // Twenty tasks of 100 ms: 2 s of work, to finish in 100 ms, needs the maximum.
    const futures = Array.from({ length: 20 }, (_, i) => client.submit(slowInc, i, 100));
    await eventually(() => registered(cluster) === 4, 5000, "4 workers");
    expect(await client.gather(futures)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    let most = 0;
    // Idle, it shrinks to the minimum; the results stay.
    await eventually(
      () => {
        most = Math.max(most, registered(cluster));
        return registered(cluster) === 1;
      },
      5000,
      "back to 1 worker",
    );
    expect(most).toBeLessThanOrEqual(4);
    expect(await client.gather(futures)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(adaptive.isStopped).toBe(false);
    // scale() ends it.
    await cluster.scale(2);
    expect(adaptive.isStopped).toBe(true);
    expect(registered(cluster)).toBe(2);
  });

  it("with a maximum of 0 (as Dask's adapt(maximum=0)), scales the cluster to nothing", async () => {
    const { cluster } = await testCluster({ workers: 2 });
    const adaptive = cluster.adapt({ maximum: 0, intervalMs: 10, waitCount: 1 });
    expect(adaptive.maximum).toBe(0);
    // The scheduler lets a retired worker go before the worker has closed, and the
    // cluster counts it until then: wait for both.
    await eventually(() => registered(cluster) === 0, 5000, "no worker registered");
    await eventually(() => cluster.workerCount === 0, 5000, "no worker of the cluster's left");
  });

  it("starts the minimum, stops when the cluster closes, and refuses bad options", async () => {
    const { cluster } = await testCluster({ workers: 0 });
    expect(() => cluster.adapt({ minimum: 3, maximum: 2 })).toThrow(
      "adapt: maximum (2) must be at least minimum (3)",
    );
    expect(() => cluster.adapt({ intervalMs: 0 })).toThrow(/intervalMs must be a number > 0/);
    expect(() => cluster.adapt({ waitCount: 0 })).toThrow(/waitCount must be an integer ≥ 1/);
    const adaptive = cluster.adapt({ minimum: 2, intervalMs: 10 });
    await eventually(() => registered(cluster) === 2, 5000, "the minimum");
    // Idle at the minimum: no change.
    await new Promise((r) => setTimeout(r, 100));
    expect(registered(cluster)).toBe(2);
    const second = cluster.adapt({ minimum: 1, intervalMs: 10, waitCount: 2 });
    expect(adaptive.isStopped).toBe(true);
    await eventually(() => registered(cluster) === 1, 5000, "the new minimum");
    await cluster.close();
    expect(second.isStopped).toBe(true);
    expect(() => cluster.adapt()).toThrow("the LocalCluster is closed");
  });
});

describe("LocalCluster.adapt with workers of its scheduler it did not start", () => {
  it("counts them toward the workers the work calls for: it starts only those missing", async () => {
    const { cluster, client } = await testCluster({ workers: 0 });
    const single = { nthreads: 1 };
    const externals = [await extraWorker(cluster, single), await extraWorker(cluster, single)];
    try {
      cluster.adapt({ maximum: 8, intervalMs: 20, targetDurationMs: 100 });
      // Four tasks of 600 ms call for four single-threaded workers: two there, two to start.
      const futures = Array.from({ length: 4 }, (_, i) => client.submit(slowInc, i, 600));
      let most = 0;
      const watch = setInterval(() => {
        most = Math.max(most, registered(cluster), cluster.workerCount + externals.length);
      }, 5);
      try {
        await eventually(() => registered(cluster) >= 4, 5000, "4 workers");
        expect(await client.gather(futures)).toEqual([1, 2, 3, 4]);
      } finally {
        clearInterval(watch);
      }
      // Counting only its own, the cluster started four, to six workers in all.
      expect(most).toBe(4);
    } finally {
      await Promise.all(externals.map((w) => w.close()));
    }
  });

  it("retires its own idle workers while the others are busy, and never tries the others", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const externals = [await extraWorker(cluster), await extraWorker(cluster)];
    try {
      // Work pinned to the other workers: the cluster's own have nothing to do.
      const futures = externals.map((w, i) =>
        client.submitWith({ workers: w.address }, slowInc, i, 2000),
      );
      await eventually(
        () => externals.every((w) => w.state.executing.size === 1),
        5000,
        "the others busy",
      );
      cluster.adapt({ intervalMs: 20, waitCount: 2 });
      // Before, the target (4 workers less the 2 idle ones) equalled the cluster's own two: kept.
      await eventually(() => cluster.workerCount === 0, 1800, "its own retired");
      expect(externals.map((w) => w.status)).toEqual(["running", "running"]);
      expect(await client.gather(futures)).toEqual([1, 2]);
    } finally {
      await Promise.all(externals.map((w) => w.close()));
    }
  });
});

/** Adaptive scaling that wants `wanted` workers, whatever the work. */
class Wanting extends Adaptive {
  wanted = 0;
  override target(): number {
    return this.wanted;
  }
}

/**
 * Adaptive scaling of a stand-in cluster of `have` workers, looked at only
 * when a test calls `tick()`: the sizes asked for, in `scaled`; `scaleTo`
 * answers `scaling()` (by default at once).
 */
function standIn(options: AdaptOptions = {}, scaling: () => Promise<void> = async () => {}) {
  const scaled: number[] = [];
  const { logger, records } = memoryLogger();
  const host = {
    state: {} as SchedulerState,
    have: 2,
    workerCount: () => host.have,
    scaleTo: (n: number) => {
      scaled.push(n);
      return scaling();
    },
    logger,
  };
  const adaptive = new Wanting(host, { intervalMs: MAX_TIMER_MS, ...options });
  adaptives.push(adaptive);
  return { adaptive, host, scaled, records };
}
const adaptives: Adaptive[] = [];
afterEach(() => {
  for (const a of adaptives.splice(0)) a.stop();
  vi.useRealTimers();
});

describe("Adaptive, apart from a cluster", () => {
  it("defaults as Dask's adapt: every second, 5 s of work a worker, 0 to any number, down after 3 looks", () => {
    const host = {
      state: {} as SchedulerState,
      workerCount: () => 0,
      scaleTo: async () => {},
      logger: memoryLogger().logger,
    };
    const adaptive = new Adaptive(host);
    adaptives.push(adaptive);
    expect({
      minimum: adaptive.minimum,
      maximum: adaptive.maximum,
      intervalMs: adaptive.intervalMs,
      waitCount: adaptive.waitCount,
      targetDurationMs: adaptive.targetDurationMs,
    }).toEqual({
      minimum: 0,
      maximum: Number.POSITIVE_INFINITY,
      intervalMs: 1000,
      waitCount: 3,
      targetDurationMs: 5000,
    });
  });

  it("scales down after waitCount looks in a row asking for fewer, counting again after one that does not", async () => {
    const { adaptive, host, scaled } = standIn({ waitCount: 3 });
    adaptive.wanted = 1;
    await adaptive.tick();
    await adaptive.tick();
    adaptive.wanted = 2;
    await adaptive.tick();
    adaptive.wanted = 1;
    await adaptive.tick();
    await adaptive.tick();
    expect(scaled).toEqual([]);
    await adaptive.tick();
    expect(scaled).toEqual([1]);
    // Scaled down: the count starts again.
    host.have = 1;
    adaptive.wanted = 0;
    await adaptive.tick();
    await adaptive.tick();
    expect(scaled).toEqual([1]);
    await adaptive.tick();
    expect(scaled).toEqual([1, 0]);
  });

  it("a look while the cluster scales does nothing; once stopped, none does", async () => {
    const finishes: (() => void)[] = [];
    const { adaptive, scaled } = standIn(
      {},
      () =>
        new Promise<void>((resolve) => {
          finishes.push(resolve);
        }),
    );
    adaptive.wanted = 3;
    // A look asks for the size at once, before it waits for the scaling.
    const first = adaptive.tick();
    const second = adaptive.tick();
    expect(scaled).toEqual([3]);
    for (const finish of finishes) finish();
    await Promise.all([first, second]);
    adaptive.stop();
    adaptive.wanted = 5;
    const late = adaptive.tick();
    expect(scaled).toEqual([3]);
    for (const finish of finishes) finish();
    await late;
  });

  it("a failure to scale is logged, unless stopped meanwhile", async () => {
    let stopWith: Adaptive | null = null;
    const { adaptive, records } = standIn({}, async () => {
      stopWith?.stop();
      throw new Error("no room");
    });
    adaptive.wanted = 3;
    await adaptive.tick();
    expect(
      records.map((r) => [r.msg, (r.err as { message?: string } | undefined)?.message]),
    ).toEqual([
      ["adaptive: scaling", undefined],
      ["adaptive scaling failed; trying again next interval", "no room"],
    ]);
    stopWith = adaptive;
    await adaptive.tick();
    expect(records.filter((r) => r.level === 50)).toHaveLength(1);
  });

  it("stop clears its timer", () => {
    vi.useFakeTimers();
    const { adaptive } = standIn({ intervalMs: 10 });
    expect(vi.getTimerCount()).toBe(1);
    adaptive.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("refuses a minimum of Infinity, counts that are negative, NaN or fractional, and an interval past a timer's reach", () => {
    expect(() => standIn({ minimum: Number.POSITIVE_INFINITY })).toThrow(
      "adapt: minimum must be finite",
    );
    expect(() => standIn({ minimum: -1 })).toThrow("adapt: minimum must be an integer ≥ 0, got -1");
    expect(() => standIn({ maximum: -1 })).toThrow("adapt: maximum must be an integer ≥ 0, got -1");
    expect(() => standIn({ maximum: Number.NaN })).toThrow(
      "adapt: maximum must be an integer ≥ 0, got NaN",
    );
    expect(() => standIn({ minimum: 1.5 })).toThrow(
      "adapt: minimum must be an integer ≥ 0, got 1.5",
    );
    expect(() => standIn({ minimum: 1, maximum: 0 })).toThrow(
      "adapt: maximum (0) must be at least minimum (1)",
    );
    expect(() => standIn({ intervalMs: MAX_TIMER_MS + 1 })).toThrow(
      `adapt: intervalMs must be a number > 0 and at most ${MAX_TIMER_MS}`,
    );
  });
});
