import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatBytes } from "../util/parseBytes.ts";
import { sizeof } from "../util/sizeof.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { resolveWorkerOptions, systemMemory } from "../worker/workerOptions.ts";
import { clusterScratch, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { bytes, inc } from "./testTasks.ts";

const scratch = clusterScratch("memory-monitor");
const extra = scratch.workers;

/** A cluster of one plain worker, and a worker with a limit of 100 kB whose memory the test sets. */
async function clusterWithMeasuredWorker(memory = { bytes: 0 }) {
  const { cluster, client } = await testCluster({ workers: 1 });
  const measured = await extraWorker(cluster, {
    memoryLimit: 100_000,
    memoryMeasure: () => memory.bytes,
    memoryMonitorIntervalMs: 5,
    spillDirectory: scratch.dir,
  });
  extra.push(measured);
  await client.waitForWorkers(2);
  const seen = () => cluster.scheduler.state.workers.get(measured.address);
  return { cluster, client, measured, memory, seen };
}

describe("the memory monitor", () => {
  it("pauses a worker beyond memoryPause: it gets no task until back within it", async () => {
    const { client, measured, memory, seen } = await clusterWithMeasuredWorker();
    memory.bytes = 85_000;
    await eventually(() => seen()?.status === "paused", 5_000, "the scheduler seeing the pause");
    expect(measured.isPaused && measured.isPausedForMemory).toBe(true);
    expect(measured.state.running).toBe(false);
    // Tasks that may run anywhere all go to the other worker.
    const parts = Array.from({ length: 20 }, (_, i) => client.submit(inc, i));
    expect(await client.gather(parts)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(measured.state.tasks.size).toBe(0);
    // A task that must run there cannot while it is paused: the client is told so
    // (NoWorkerError), and the task runs once the worker resumes.
    const there = client.submitWith({ workers: [measured.address] }, inc, 100);
    await expect(there).rejects.toThrow(
      `none of the workers it is restricted to is running (workers=[${measured.address}]; one is paused)`,
    );
    expect(measured.state.tasks.size).toBe(0);
    memory.bytes = 80_000; // at the threshold, not beyond it
    await eventually(() => there.status === "pending" || there.status === "finished", 5_000);
    expect(await there).toBe(101);
    expect(seen()?.status).toBe("running");
    expect(measured.isPaused).toBe(false);
    expect(measured.state.running).toBe(true);
  });

  it("a worker paused for memory stays paused through a failed retirement", async () => {
    const { client, cluster, measured, memory, seen } = await clusterWithMeasuredWorker();
    // x is on the measured worker alone; then its memory runs short.
    const [x] = await client.scatter([7], { workers: [measured.address] });
    memory.bytes = 90_000;
    await eventually(() => seen()?.status === "paused", 5_000, "the pause");
    // The only other worker leaves: nobody can take x, so the retirement fails.
    const other = cluster.workers[0];
    await client.retireWorkers([other.address]);
    const answer = await client.retireWorkers([measured.address]);
    expect(answer.failed.map((f) => f.worker)).toEqual([measured.address]);
    expect(seen()?.status).toBe("paused");
    expect(measured.isPaused).toBe(true);
    memory.bytes = 0;
    await eventually(() => seen()?.status === "running", 5_000, "the resumption");
    expect(await client.submit(inc, x)).toBe(8);
  });

  it("closes a worker beyond memoryTerminate on a fault; its tasks run elsewhere", async () => {
    const { client, measured, memory, seen } = await clusterWithMeasuredWorker();
    const [x] = await client.scatter([1], { workers: [measured.address] });
    memory.bytes = 96_000;
    await measured.closed;
    expect(measured.fault).toBe("its memory (93.75 kiB) exceeded 95% of its limit (97.66 kiB)");
    await eventually(() => seen() === undefined, 5_000, "the scheduler removing it");
    // x was lost with it: a scattered value cannot be computed again.
    await expect(client.submit(inc, x)).rejects.toThrow(/was cancelled: lost dependencies/);
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it("with a measure other than managed, spills values beyond memorySpill back to the target", async () => {
    const { client, measured, memory } = await clusterWithMeasuredWorker();
    const parts = Array.from({ length: 10 }, (_, i) =>
      client.submitWith({ workers: [measured.address] }, bytes, 3000 + i),
    );
    await client.gather(parts);
    expect(measured.spillStats?.spilledKeys).toBe(0);
    // 75% measured: 15 kB to spill to be back at 60%, i.e. 5 of the 3 kB values.
    memory.bytes = 75_000;
    await eventually(() => (measured.spillStats?.spilledKeys ?? 0) > 0, 5_000, "a spill");
    expect(measured.spillStats?.spilledKeys).toBe(5);
    // The least recently used: the first five made.
    const firstFive = [0, 1, 2, 3, 4].reduce((n, i) => n + sizeof(new Uint8Array(3000 + i)), 0);
    expect(measured.spillStats?.spilledBytes).toBe(firstFive);
    expect(measured.isPaused).toBe(false);
    expect(((await parts[0]) as Uint8Array).length).toBe(3000);
  });

  it("a worker its failed spills paused resumes once the disk takes them again", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const spillDirectory = join(scratch.dir, "disk");
    mkdirSync(spillDirectory);
    const w = await extraWorker(cluster, {
      memoryLimit: 100_000,
      memoryMonitorIntervalMs: 5,
      spillDirectory,
    });
    extra.push(w);
    await client.waitForWorkers(2);
    rmSync(spillDirectory, { recursive: true }); // the disk failing: every write fails
    // 4 values of 21 kB: 84% of the limit kept in memory, beyond the pause share
    // with the last alone (a task restricted to a paused worker would be refused).
    for (let i = 0; i < 4; i++) {
      await client.submitWith({ workers: [w.address] }, bytes, 21_000 + i);
    }
    await eventually(() => w.isPausedForMemory, 5_000, "the pause");
    expect(w.spillStats).toMatchObject({ memoryKeys: 4, spilledKeys: 0 });
    mkdirSync(spillDirectory); // the disk takes them again; the paused worker stores nothing new
    await eventually(() => !w.isPaused, 5_000, "the resumption");
    expect(w.spillStats?.memoryBytes).toBeLessThanOrEqual(60_000);
    expect(await client.submitWith({ workers: [w.address] }, inc, 1)).toBe(2);
  });

  it("refuses to start a worker beyond a threshold already, saying what to change", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    await expect(
      extraWorker(cluster, { memoryLimit: 1000, memoryMeasure: () => 900 }),
    ).rejects.toThrow(
      "memoryLimit 0.98 kiB is too small: the measured memory is 900 B already, beyond the 80% " +
        "of it at which the worker pauses (memoryPause); give a larger limit",
    );
    await expect(
      extraWorker(cluster, { memoryLimit: "64kB", memoryMeasure: "process" }),
    ).rejects.toThrow(
      /^memoryLimit 62\.50 kiB is too small: the process memory is .* already, beyond the 95% of it at which the worker closes \(memoryTerminate\); give a larger limit, or measure only the task values held \(memoryMeasure "managed"\)$/,
    );
    // Without the thresholds it starts.
    const w = await extraWorker(cluster, {
      memoryLimit: "64kB",
      memoryMeasure: "process",
      memoryPause: false,
      memoryTerminate: false,
      memorySpill: false,
    });
    extra.push(w);
    expect(w.status).toBe("running");
  });

  it("a LocalCluster restarted beyond memoryPause starts its workers paused, not refused, and they resume", async () => {
    // A process shared by the workers (and a task's leak) keeps its memory through a
    // restart: each new worker was refused as too small, and the cluster closed.
    const memory = { bytes: 0 };
    const { cluster, client } = await testCluster({
      workers: 2,
      worker: {
        memoryLimit: 100_000,
        memoryMeasure: () => memory.bytes,
        memoryMonitorIntervalMs: 5,
        spillDirectory: scratch.dir,
      },
    });
    memory.bytes = 85_000;
    await eventually(() => cluster.workers.every((w) => w.isPaused), 5_000, "both paused");
    await client.restart({ timeoutMs: 20_000 });
    expect(cluster.workers).toHaveLength(2);
    expect(cluster.workers.every((w) => w.status === "paused")).toBe(true);
    memory.bytes = 0;
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it.runIf(process.platform === "linux")(
    "refuses to start a worker whose spill directory it cannot write in",
    async () => {
      const { cluster } = await testCluster({ workers: 1 });
      // /proc exists and is a directory, but nothing can be made in it, whoever asks (root
      // too). It used to start: every spill failed, its values stayed in memory, and the
      // worker paused for good once they filled it, told only by a warning.
      await expect(
        extraWorker(cluster, { memoryLimit: "1MiB", spillDirectory: "/proc" }),
      ).rejects.toThrow(
        /^spillDirectory \/proc cannot be written in \(\w+\): the values beyond the memory target could not be spilled/,
      );
      // Without a memory limit nothing is spilled: it starts.
      const w = await extraWorker(cluster, { spillDirectory: "/proc" });
      extra.push(w);
      expect(w.status).toBe("running");
    },
  );

  it("warns once as it starts of thresholds out of order, which it takes as given, as Dask does", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const { logger, records } = memoryLogger();
    const w = await extraWorker(cluster, {
      memoryLimit: "1GiB",
      memoryPause: 0.97,
      spillDirectory: scratch.dir,
      logger,
    });
    extra.push(w);
    expect(w.status).toBe("running");
    const warned = records.filter((r) =>
      String(r.msg).startsWith("memory thresholds out of order"),
    );
    expect(warned.map((r) => r.msg)).toEqual([
      "memory thresholds out of order, taken as given (as Dask does): memory pause 0.97 is above terminate 0.95: the worker is closed before it pauses",
    ]);
    expect(warned[0]).toMatchObject({ level: 40, memoryPause: 0.97, memoryTerminate: 0.95 });
  });

  it("warns as it starts of a memory limit above the machine's memory, lowered to it, in Dask's words", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const { logger, records } = memoryLogger();
    const w = await extraWorker(cluster, {
      memoryLimit: "1PiB",
      spillDirectory: scratch.dir,
      logger,
    });
    extra.push(w);
    expect(w.status).toBe("running");
    expect(w.options.memoryLimit).toBe(systemMemory());
    const warned = records.filter((r) =>
      String(r.msg).startsWith("Ignoring provided memory limit"),
    );
    expect(warned.map((r) => r.msg)).toEqual([
      `Ignoring provided memory limit 1PiB due to system memory limit of ${formatBytes(systemMemory())}`,
    ]);
    expect(warned[0]).toMatchObject({
      level: 40,
      memoryLimit: "1PiB",
      systemMemory: systemMemory(),
    });
  });

  it("refuses bad options, naming them", () => {
    const base = { scheduler: "inproc://x" };
    const o = resolveWorkerOptions(base);
    expect([o.memoryMeasure, o.memorySpill, o.memoryPause, o.memoryTerminate]).toEqual([
      "managed",
      0.7,
      0.8,
      0.95,
    ]);
    expect(o.memoryMonitorIntervalMs).toBe(100);
    expect(() => resolveWorkerOptions({ ...base, memoryPause: 1.5 })).toThrow(
      "Worker option memoryPause must be a number in (0, 1] or false, got 1.5",
    );
    expect(() =>
      resolveWorkerOptions({ ...base, memoryTerminate: true as unknown as false }),
    ).toThrow("Worker option memoryTerminate must be a number in (0, 1] or false, got true");
    expect(() =>
      resolveWorkerOptions({ ...base, memoryMeasure: "rss" as unknown as "process" }),
    ).toThrow(
      'Worker option memoryMeasure must be "managed", "process" or a function giving bytes, got "rss"',
    );
    expect(() => resolveWorkerOptions({ ...base, memoryMonitorIntervalMs: 0 })).toThrow(
      /memoryMonitorIntervalMs must be a positive integer/,
    );
  });
});
