import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveWorkerOptions, systemMemory } from "../worker/workerOptions.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { byteSum, bytes } from "./testTasks.ts";

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weft-spill-cluster-"));
});
afterEach(async () => {
  await closeTestClusters();
  rmSync(dir, { recursive: true, force: true });
});

/** The sum of the bytes `bytes(n)` makes. */
function expectedSum(n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 251;
  return s;
}

describe("workers with a memoryLimit spill to disk", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`results beyond the limit go to disk and come back right (${protocol})`, async () => {
      const { cluster, client } = await testCluster({
        protocol,
        worker: { memoryLimit: "20kB", memoryTarget: 0.5, spillDirectory: dir },
      });
      // 40 values of 2 kB on 2 workers keeping 10 kB each: most go to disk.
      const parts = Array.from({ length: 40 }, (_, i) => client.submit(bytes, 2000 + i));
      await client.gather(parts);
      const stats = cluster.workers.map((w) => w.spillStats);
      for (const s of stats) {
        expect(s?.memoryBytes).toBeLessThanOrEqual(10_000);
      }
      const spilled = stats.reduce((n, s) => n + (s?.spilledKeys ?? 0), 0);
      expect(spilled).toBeGreaterThan(20);
      expect(readdirSync(dir).length).toBeGreaterThan(0);
      // Tasks read them back, on their worker or fetched by the other.
      const sums = parts.map((p) => client.submit(byteSum, p));
      expect(await client.gather(sums)).toEqual(parts.map((_, i) => expectedSum(2000 + i)));
      // And so does the client.
      expect((await parts[0]) as Uint8Array).toHaveLength(2000);
      expect(cluster.workers.some((w) => (w.spillStats?.unspillCount ?? 0) > 0)).toBe(true);
      await cluster.close();
      // Closed, the workers removed their spill directories.
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  it("refuses bad options, naming them", () => {
    const base = { scheduler: "inproc://x" };
    expect(resolveWorkerOptions({ ...base, memoryLimit: "2GiB" }).memoryLimit).toBe(2 ** 31);
    expect(resolveWorkerOptions(base).memoryLimit).toBeNull();
    // "auto": the machine's memory (or its container's) times the share of the CPUs.
    const cpus = availableParallelism();
    const auto = resolveWorkerOptions({ ...base, memoryLimit: "auto", nthreads: 1 }).memoryLimit;
    expect(auto).toBe(Math.floor(systemMemory() * Math.min(1, 1 / cpus)));
    expect(
      resolveWorkerOptions({ ...base, memoryLimit: "auto", nthreads: cpus * 4 }).memoryLimit,
    ).toBe(Math.floor(systemMemory()));
    expect(systemMemory()).toBeLessThanOrEqual(totalmem());
    expect(() => resolveWorkerOptions({ ...base, memoryLimit: "lots" })).toThrow(
      /^Worker option memoryLimit: /,
    );
    // A bare number up to 1 is Dask's: 0 no limit, another a share of the machine's memory
    // (1 was a 1-byte budget, every task failing with a MemoryError).
    for (const none of [0, "0", "0.0"]) {
      expect(resolveWorkerOptions({ ...base, memoryLimit: none }).memoryLimit).toBeNull();
    }
    for (const [given, share] of [
      [0.5, 0.5],
      ["0.5", 0.5],
      [1, 1],
      ["1", 1],
      [" .25 ", 0.25],
    ] as const) {
      expect(resolveWorkerOptions({ ...base, memoryLimit: given }).memoryLimit).toBe(
        Math.floor(share * systemMemory()),
      );
    }
    expect(resolveWorkerOptions({ ...base, memoryLimit: 2 }).memoryLimit).toBe(2);
    expect(resolveWorkerOptions({ ...base, memoryLimit: 2 }).memoryLimitCapped).toBeNull();
    // Above the machine's memory: lowered to it, as Dask's parse_memory_limit does (a
    // worker with a limit no process here reaches never spills nor pauses).
    const machine = systemMemory();
    for (const given of [machine * 2, "1PiB"]) {
      const o = resolveWorkerOptions({ ...base, memoryLimit: given });
      expect(o.memoryLimit).toBe(machine);
      expect(o.memoryLimitCapped).toEqual({ asGiven: given, machine });
    }
    expect(resolveWorkerOptions({ ...base, memoryLimit: machine }).memoryLimitCapped).toBeNull();
    expect(() => resolveWorkerOptions({ ...base, memoryLimit: -0.5 })).toThrow(
      "Worker option memoryLimit must be a size of at least 1 byte, got -0.5",
    );
    // A fraction of a byte, which Dask's parse_bytes and int() truncate ("1.5" is 1 byte).
    expect(() => resolveWorkerOptions({ ...base, memoryLimit: "1.5" })).toThrow(
      'Worker option memoryLimit must be a whole number of bytes, got "1.5"',
    );
    expect(() => resolveWorkerOptions({ ...base, memoryLimit: 1e6 + 0.5 })).toThrow(
      "Worker option memoryLimit must be a whole number of bytes, got 1000000.5 (Math.floor a computed size)",
    );
    expect(resolveWorkerOptions({ ...base, memoryLimit: "1.5kB" }).memoryLimit).toBe(1500);
    // A target at or above the pause (or terminate) share: paused, or killed, for good.
    expect(() => resolveWorkerOptions({ ...base, memoryTarget: 0.9 })).toThrow(
      /^Worker option memoryTarget \(0\.9\) must be below memoryPause \(0\.8\): .*pause for good/,
    );
    expect(() => resolveWorkerOptions({ ...base, memoryTarget: 1, memoryPause: false })).toThrow(
      /must be below memoryTerminate \(0\.95\): .*be terminated/,
    );
    expect(
      resolveWorkerOptions({
        ...base,
        memoryTarget: 0.9,
        memoryPause: false,
        memoryTerminate: false,
      }).memoryTarget,
    ).toBe(0.9);
    expect(() => resolveWorkerOptions({ ...base, memoryTarget: 1.5 })).toThrow(
      "Worker option memoryTarget must be a number in (0, 1], got 1.5",
    );
    expect(() => resolveWorkerOptions({ ...base, spillDirectory: join(dir, "nope") })).toThrow(
      /^Worker option spillDirectory: no such directory/,
    );
    // A file: every spill would fail, each value staying in memory.
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(() => resolveWorkerOptions({ ...base, spillDirectory: file })).toThrow(
      `Worker option spillDirectory: not a directory: ${JSON.stringify(file)}`,
    );
    expect(existsSync(dir)).toBe(true);
  });
});
