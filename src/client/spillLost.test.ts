import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Worker } from "../worker/worker.ts";
import type { Future } from "./future.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import {
  byteSum,
  bytes,
  describeBytes,
  gatedInc,
  inc,
  slowByteSum,
  TASK_GATE,
} from "./testTasks.ts";

let dir = "";
let other = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weft-spill-lost-"));
  other = mkdtempSync(join(tmpdir(), "weft-spill-lost-other-"));
});
const extra: Worker[] = [];
/** Opens the gate a test's `gatedInc` waits on. */
let openGate = () => {};
afterEach(async () => {
  openGate(); // a test that failed holding a thread: its worker's close waits for the task
  for (const w of extra.splice(0)) await w.close();
  await closeTestClusters();
  rmSync(dir, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

/** The sum of the bytes `bytes(n)` makes. */
function expectedSum(n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += i % 251;
  return s;
}

/** The spill files under `dir` (each worker's directory holds its own). */
function spillFiles(): string[] {
  return readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
}

type Damage = "deleted" | "truncated" | "garbage" | "directory removed";

/** Damage every spill file under `dir` (or remove the directories holding them). */
function damage(how: Damage): void {
  const files = spillFiles();
  expect(files.length).toBeGreaterThan(0);
  if (how === "directory removed") {
    for (const d of readdirSync(dir)) rmSync(join(dir, d), { recursive: true });
    return;
  }
  for (const f of files) {
    if (how === "deleted") rmSync(f);
    else if (how === "truncated") truncateSync(f, 3);
    else writeFileSync(f, "not a serialised value");
  }
}

/** A logger keeping its records, to read what the workers said. */
function recordingLogger(): { logger: pino.Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, records };
}

// 12 kB values on workers keeping 10 kB in memory: each goes straight to disk, and stays
// there when read (so that its file is read again at each use).
const SPILLING = { memoryLimit: "20kB", memoryTarget: 0.5 } as const;
const N = 12_000;

/**
 * A cluster of a spilling worker `a` holding `x` (12 kB, spilled), then its file
 * deleted, and `b`: on `a`, `y` (which needs `x`; restricted to `a`, loosely or
 * not) ready behind `hold` on its one thread, when `a` pauses for its memory
 * (`memory.bytes`, which the test may lower). `hold` ends once `a` is paused.
 */
async function pausedWithReadyDependent(loose: boolean) {
  const memory = { bytes: 0 };
  const { cluster, client } = await testCluster({
    workers: 1,
    // y, loosely restricted to a and waiting there behind hold, is what b would steal:
    // on a loaded host a stealing round came before the wait for y ready on a saw it,
    // which then waited its 10 s in vain.
    scheduler: { workStealing: false },
    worker: {
      ...SPILLING,
      spillDirectory: dir,
      memoryMeasure: () => memory.bytes,
      memoryMonitorIntervalMs: 5,
    },
  });
  const [a] = cluster.workers;
  const x = client.submit(bytes, N);
  await x;
  const b = await extraWorker(cluster);
  extra.push(b);
  await client.waitForWorkers(2);
  // Held until a is paused, not for a set time: a 200 ms hold ended on a loaded host
  // before y came, which then ran rather than waited ready.
  TASK_GATE.wait = new Promise((resolve) => {
    openGate = resolve;
  });
  const hold = client.submitWith({ workers: [a.address] }, gatedInc, 0);
  await eventually(() => a.state.executing.size === 1);
  const y = client.submitWith({ workers: [a.address], allowOtherWorkers: loose }, byteSum, x);
  await eventually(() => a.state.tasks.get(y.key)?.state === "ready");
  memory.bytes = 17_000; // beyond memoryPause (80%), within memoryTerminate (95%)
  const seen = () => cluster.scheduler.state.workers.get(a.address)?.status;
  await eventually(() => seen() === "paused", 5000, "the pause");
  damage("deleted");
  openGate();
  return { a, b, x, y, hold, client, memory };
}

describe("a spilled value gone from disk", () => {
  for (const how of ["deleted", "truncated", "garbage", "directory removed"] as const) {
    it(`is computed again for a task on its worker (${how}), which says what was lost`, async () => {
      const { logger, records } = recordingLogger();
      const { cluster, client } = await testCluster({
        workers: 1,
        logger,
        worker: { ...SPILLING, spillDirectory: dir },
      });
      const x = client.submit(bytes, N);
      await x;
      const [file] = spillFiles();
      damage(how);
      expect(await client.submit(byteSum, x)).toBe(expectedSum(N));
      const [w] = cluster.workers;
      expect(w.status).toBe("running");
      // The worker said which value was lost, and where it was.
      const told = records.filter((r) => r.key === x.key && r.file === file);
      expect(told).toHaveLength(1);
      expect(told[0].msg).toMatch(/^a spilled value is gone from disk/);
      const err = told[0].err as { type: string; message: string };
      expect(err.type).toBe("SpilledValueLostError");
      expect(err.message).toContain(`the spilled value of "${x.key}" is gone from disk: ${file} `);
      // Dropped, then computed again: the worker holds it once more, and nothing lost.
      expect(w.spillStats?.lostKeys).toBe(0);
      expect(await x).toHaveLength(N);
      // And the worker still spills.
      const spills = w.spillStats?.spillCount ?? 0;
      expect(await client.submit(byteSum, client.submit(bytes, N + 1))).toBe(expectedSum(N + 1));
      expect(w.spillStats?.spillCount).toBeGreaterThan(spills);
      expect(w.spillStats?.spillFailures).toBe(0);
    });
  }

  it("is computed again for all the tasks on its worker that need it", async () => {
    const { client } = await testCluster({
      workers: 1,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const x = client.submit(bytes, N);
    await x;
    damage("deleted");
    const sums = Array.from({ length: 4 }, () => client.submitWith({ pure: false }, byteSum, x));
    const described = client.submit(describeBytes, x);
    expect(await client.gather(sums)).toEqual(sums.map(() => expectedSum(N)));
    expect(await described).toMatchObject({ type: "Uint8Array", byteLength: N });
  });

  it("waits for a task that read it before it went, then is computed again for the others", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      threadsPerWorker: 2,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const x = client.submit(bytes, N);
    await x;
    // The slow task reads it from disk, then holds the worker's copy while it runs.
    const slow = client.submit(slowByteSum, x, 400);
    await eventually(() => cluster.workers[0].state.executing.size === 1);
    damage("deleted");
    const fast = client.submit(byteSum, x);
    expect(await client.gather([slow, fast])).toEqual([expectedSum(N), expectedSum(N)]);
    // Rescheduled at once, `fast` would have come straight back and failed again, as fast
    // as messages go (thousands of times while `slow` ran): it waited between tries.
    const tries = cluster.workers[0].state
      .story(fast.key)
      .filter((e) => JSON.stringify(e).includes("spilled-input-lost"));
    expect(tries.length).toBeGreaterThan(0);
    expect(tries.length).toBeLessThan(100);
  });

  it("is computed again for tasks taking turns at one resource, rather than livelocking", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      threadsPerWorker: 2,
      worker: { ...SPILLING, spillDirectory: dir, resources: { R: 1 } },
    });
    const x = client.submit(bytes, N);
    await x;
    damage("deleted");
    // One runs while the others wait for R (constrained): each, finding the input lost,
    // once waited for those behind it, which the scheduler sent straight back.
    const sums = Array.from({ length: 6 }, () =>
      client.submitWith({ pure: false, resources: { R: 1 } }, byteSum, x),
    );
    const outcome = await Promise.race([
      client.gather(sums),
      sleep(5000).then(() => "still rescheduling after 5 s"),
    ]);
    expect(outcome).toEqual(sums.map(() => expectedSum(N)));
    expect(cluster.workers[0].spillStats?.lostKeys).toBe(0);
  });

  it("is computed again for many tasks that also fetch an input, rather than livelocking", async () => {
    const { cluster, client } = await testCluster({
      threadsPerWorker: 2,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const [a, b] = cluster.workers.map((w) => w.address);
    const x = client.submitWith({ workers: [a] }, bytes, N);
    await x;
    const ms = Array.from({ length: 20 }, (_, i) =>
      client.submitWith({ workers: [b], pure: false }, inc, i),
    );
    await client.gather(ms);
    damage("deleted");
    // Waiting for another input, then waiting out the loss, each held up the next to find
    // it lost on the other thread, while those rescheduled came straight back.
    const sums = ms.map((m) => client.submitWith({ pure: false }, slowByteSum, x, m));
    const outcome = await Promise.race([
      client.gather(sums),
      sleep(5000).then(() => "still rescheduling after 5 s"),
    ]);
    expect(outcome).toEqual(sums.map(() => expectedSum(N)));
    expect(cluster.workers[0].spillStats?.lostKeys).toBe(0);
  });

  it("is computed again for a peer while its worker is paused with tasks waiting for it", async () => {
    const { a, b, x, y, hold, client } = await pausedWithReadyDependent(true);
    // y, never started while a is paused, kept the key there: b, sent to a for it,
    // asked again and again until a resumed.
    const z = client.submitWith({ workers: [b.address], pure: false }, byteSum, x);
    const outcome = await Promise.race([
      client.gather([z, y]),
      sleep(5000).then(() => "still waiting after 5 s"),
    ]);
    expect(outcome).toEqual([expectedSum(N), expectedSum(N)]);
    expect(await hold).toBe(1);
    expect(a.isPaused).toBe(true);
    expect(a.spillStats?.lostKeys).toBe(0);
  });

  it("paused, tells a task only it may run that no worker can, which runs once it resumes", async () => {
    const { b, x, y, client, memory } = await pausedWithReadyDependent(false);
    const z = client.submitWith({ workers: [b.address], pure: false }, byteSum, x);
    expect(await z).toBe(expectedSum(N));
    // As any task restricted to a paused worker (see docs/worker.md).
    await expect(y).rejects.toThrow(/none of the workers it is restricted to is running/);
    memory.bytes = 0;
    await eventually(() => y.status === "pending" || y.status === "finished", 5000);
    expect(await y).toBe(expectedSum(N));
  });

  for (const protocol of ["inproc", "tcp"] as const) {
    it(`is computed again for a peer fetching it (${protocol})`, async () => {
      const { cluster, client } = await testCluster({
        protocol,
        worker: { ...SPILLING, spillDirectory: dir },
      });
      const [a, b] = cluster.workers.map((w) => w.address);
      const x = client.submitWith({ workers: [a] }, bytes, N);
      await x;
      damage("deleted");
      expect(await client.submitWith({ workers: [b] }, byteSum, x)).toBe(expectedSum(N));
      expect(cluster.workers.map((w) => w.status)).toEqual(["running", "running"]);
    });
  }

  it("is computed again for a task run on a worker thread", async () => {
    const { client } = await testCluster({
      workers: 1,
      executor: "threads",
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const x = client.submit(bytes, N);
    await x;
    damage("truncated");
    expect(await client.submit(byteSum, x)).toBe(expectedSum(N));
  });

  it("is fetched from another holder when there is one", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const b = await extraWorker(cluster, { ...SPILLING, spillDirectory: other });
    try {
      const a = cluster.workers[0].address;
      const x = client.submitWith({ workers: [a] }, bytes, N);
      await x;
      await client.replicate([x], { n: 2 });
      expect(Object.values(await client.whoHas([x]))[0]).toHaveLength(2);
      damage("deleted"); // a's copy only: b spills to another directory
      expect(await client.submitWith({ workers: [a] }, byteSum, x)).toBe(expectedSum(N));
      // b's copy stayed, and served a: the key was not lost to the cluster.
      expect(b.spillStats?.lostKeys).toBe(0);
      expect(b.state.tasks.get(x.key)?.state).toBe("memory");
    } finally {
      await b.close();
    }
  });

  it("is computed again for a client gathering it", async () => {
    const { client } = await testCluster({
      workers: 1,
      protocol: "tcp",
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const x = client.submit(bytes, N);
    await x;
    damage("garbage");
    const [got] = (await client.gather([x])) as Uint8Array[];
    expect(got).toHaveLength(N);
    expect(got[N - 1]).toBe((N - 1) % 251);
  });

  it("is computed again for a client gathering it while a task there reads it for long", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      threadsPerWorker: 2,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const x = client.submit(bytes, N);
    await x;
    // Longer than the client tries a key lost with its worker (four fetches, about 5 s).
    const slow = client.submit(slowByteSum, x, 6000);
    await eventually(() => cluster.workers[0].state.executing.size === 1);
    damage("deleted");
    const [got] = (await client.gather([x])) as Uint8Array[];
    // Not before the slow task let its worker drop the key: then computed again.
    expect(slow.status).toBe("finished");
    expect(got).toHaveLength(N);
    expect(await slow).toBe(expectedSum(N));
  }, 30_000);

  it("lost when scattered, fails what needs it, saying so, rather than hanging", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      worker: { ...SPILLING, spillDirectory: dir },
    });
    const [x] = (await client.scatter([bytes.fn(N)])) as [Future<Uint8Array>];
    await sleep(10);
    damage("deleted");
    const total = client.submit(byteSum, x);
    await expect(total).rejects.toThrow(
      /was cancelled: lost dependencies: a task it needs was lost/,
    );
    await expect(x.result()).rejects.toThrow(/scattered data lost/);
    expect(cluster.workers[0].status).toBe("running");
  });
});
