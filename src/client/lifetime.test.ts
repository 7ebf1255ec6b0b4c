import { afterEach, describe, expect, it, vi } from "vitest";
import type { Worker } from "../worker/worker.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { inc, slowInc, sum } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("worker lifetime (Dask's --lifetime)", () => {
  it("a worker whose lifetime is over retires: its results move, then it closes for good", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const short = await extraWorker(cluster, { lifetimeMs: 400 });
    try {
      const y = client.submitWith({ workers: short.address }, inc, 1);
      expect(await y).toBe(2);
      expect((await client.whoHas([y]))[y.key]).toEqual([short.address]);
      await eventually(() => short.status === "closed", 10_000, "the worker's lifetime ended");
      expect(short.fault).toBeNull();
      expect(short.restartRequested).toBe(false);
      expect(cluster.scheduler.state.workers.has(short.address)).toBe(false);
      // Its result was copied before it went: nothing is computed again.
      const before = (await client.counters()).tasksFinished;
      expect(await client.submit(inc, y)).toBe(3);
      expect((await client.counters()).tasksFinished).toBe(before + 1);
    } finally {
      await short.close();
    }
  });

  it("a lifetime that the stagger takes past 2^31 - 1 ms is not over at once", async () => {
    const { cluster } = await testCluster({ workers: 0 });
    // The stagger's draw at its top: the lifetime of about 24.8 days comes out at 49.
    // A Node.js timer that long fired after 1 ms: the worker retired as it started.
    const random = vi.spyOn(Math, "random").mockReturnValue(0.999);
    let long: Worker;
    try {
      long = await extraWorker(cluster, {
        lifetimeMs: 2 ** 31 - 1,
        lifetimeStaggerMs: 2 ** 31 - 1,
      });
    } finally {
      random.mockRestore();
    }
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(long.status).toBe("running");
    } finally {
      await long.close();
    }
  });

  it("with lifetimeRestart a LocalCluster starts new workers, and the work goes on", async () => {
    const { cluster, client } = await testCluster({
      workers: 2,
      worker: { lifetimeMs: 300, lifetimeStaggerMs: 150, lifetimeRestart: true },
    });
    const first = cluster.workers.map((w) => w.address);
    // Work that outlives every worker of the start, several times over.
    const futures = Array.from({ length: 40 }, (_, i) => client.submit(slowInc, i, 40));
    const total = client.submit(sum, futures);
    expect(await total).toBe(Array.from({ length: 40 }, (_, i) => i + 1).reduce((a, b) => a + b));
    await eventually(
      () => cluster.workers.every((w) => !first.includes(w.address)),
      10_000,
      "every worker of the start replaced",
    );
    expect(cluster.workers.every((w) => w.fault === null)).toBe(true);
  });

  it("a worker whose results no other worker can take yet asks again, and hands them over once one comes", async () => {
    const { cluster, client } = await testCluster({ workers: 0 });
    const alone = await extraWorker(cluster, { lifetimeMs: 1_000 });
    let later: Worker | null = null;
    try {
      // Scattered: lost with its worker, nothing could compute it again.
      const [x] = await client.scatter([41]);
      // Its lifetime is over: no other worker, so it stays and asks again.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(alone.status).toBe("running");
      later = await extraWorker(cluster);
      await eventually(() => alone.status === "closed", 10_000, "the worker retired");
      expect(alone.fault).toBeNull();
      expect((await client.whoHas([x]))[x.key]).toEqual([later.address]);
      expect(await client.submit(inc, x)).toBe(42);
    } finally {
      await alone.close();
      await later?.close();
    }
  });

  it("closeGracefully: a worker leaves at once, without losing what only it holds", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [leaving, staying] = cluster.workers;
    const x = client.submitWith({ workers: leaving.address }, inc, 41);
    expect(await x).toBe(42);
    // Twice at once: one retirement.
    await Promise.all([leaving.closeGracefully(), leaving.closeGracefully()]);
    expect(leaving.status).toBe("closed");
    expect((await client.whoHas([x]))[x.key]).toEqual([staying.address]);
    expect(await client.submit(inc, x)).toBe(43);
  });
});

describe("the scheduler's idleTimeoutMs (Dask's idle-timeout)", () => {
  it("an idle cluster closes, workers and scheduler; one at work does not", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      scheduler: { idleTimeoutMs: 300 },
    });
    // Longer than the timeout, without a transition while it runs.
    expect(await client.submit(slowInc, 1, 1_000)).toBe(2);
    expect(cluster.scheduler.status).toBe("running");
    await eventually(() => cluster.scheduler.status === "closed", 10_000, "the scheduler closed");
    const [worker] = cluster.workers;
    await eventually(() => worker.status === "closed", 10_000, "the worker closed");
    expect(worker.fault).toBeNull();
    expect(worker.restartRequested).toBe(false);
    await client.closed;
    expect(client.isClosed).toBe(true);
  });
});
