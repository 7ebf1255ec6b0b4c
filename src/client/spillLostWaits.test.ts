import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOST_INPUT_HELD_MS } from "../worker/lostSpills.ts";
import type { Future } from "./future.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { awaitsAnotherReader, holdsWithClient } from "./testSpillLostTasks.ts";
import { byteSum, bytes } from "./testTasks.ts";

const SPILL_LOST_TASKS = new URL("./testSpillLostTasks.ts", import.meta.url).href;

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weft-spill-lost-waits-"));
});
afterEach(async () => {
  await closeTestClusters();
  rmSync(dir, { recursive: true, force: true });
});

/** Delete every spill file under `dir` (each worker's directory holds its own). */
function deleteSpillFiles(): void {
  const files = readdirSync(dir).flatMap((d) =>
    readdirSync(join(dir, d)).map((f) => join(dir, d, f)),
  );
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) rmSync(f);
}

// As spillLost.test.ts: 12 kB values on workers keeping 10 kB in memory go straight to
// disk, and stay there when read.
const SPILLING = { memoryLimit: "20kB", memoryTarget: 0.5 } as const;
const N = 12_000;
/**
 * The workers' lostInputHeldMs where a test waits it out before the loss errs a
 * task (LOST_INPUT_HELD_MS, 2 s, each time): what it guards is the error coming
 * at all, rather than the task rescheduled for good.
 */
const HELD_MS = 300;
const SUM = Array.from({ length: N }, (_, i) => i % 251).reduce((a, b) => a + b, 0);

/**
 * A cluster of one spilling worker (two threads, `executor`) running the tasks of
 * testSpillLostTasks.ts, holding `x` (12 kB, on disk), published as `{ future: x }`
 * under "x"; its `lostInputHeldMs` as given.
 */
async function spilledX(executor: "inline" | "threads", lostInputHeldMs = LOST_INPUT_HELD_MS) {
  const { cluster, client } = await testCluster({
    workers: 1,
    threadsPerWorker: 2,
    executor,
    taskModules: [CLIENT_TEST_TASKS, SPILL_LOST_TASKS],
    worker: { ...SPILLING, spillDirectory: dir, lostInputHeldMs },
  });
  const [w] = cluster.workers;
  const x = client.submit(bytes, N);
  await x;
  await client.publishDataset("x", { future: x });
  /** Until `key` runs on `w` (having read its inputs). */
  const started = (key: string) =>
    eventually(() => ["executing", "long-running"].includes(w.state.tasks.get(key)?.state ?? ""));
  return { cluster, w, client, x, started };
}

describe("a spilled value gone from disk, held by a task waiting for another reader", () => {
  const cases = [
    { executor: "inline", seceding: true },
    { executor: "inline", seceding: false },
    { executor: "threads", seceding: false },
  ] as const;
  for (const { executor, seceding } of cases) {
    const how = `${seceding ? "seceded" : "holding a client"}, ${executor}`;
    it(`fails that reader with the loss, rather than hanging (${how})`, async () => {
      const { w, client, x, started } = await spilledX(executor, HELD_MS);
      // It reads x from disk as it starts, then awaits byteSum(x), which finds the file
      // gone: rescheduled back here again and again, while x, held, could not be dropped.
      const h = client.submit(awaitsAnotherReader, x, "x", 200, seceding);
      await started(h.key);
      deleteSpillFiles();
      const outcome = await Promise.race([
        h.result(),
        sleep(HELD_MS + 6000).then(() => "still waiting"),
      ]);
      expect(outcome).toMatch(new RegExp(`the spilled value of "${x.key}" is gone from disk`));
      // Then dropped, and computed again for what needs it.
      await client.unpublishDataset("x");
      expect(await client.submit(byteSum, x)).toBe(SUM);
      expect(w.spillStats?.lostKeys).toBe(0);
    }, 20_000);
  }

  for (const seceding of [true, false]) {
    it(`is computed again for the others once a task merely holding it ends (${seceding ? "seceded" : "holding a client"})`, async () => {
      const { w, client, x, started } = await spilledX("inline");
      const h = client.submit(holdsWithClient, x, LOST_INPUT_HELD_MS / 4, seceding);
      await started(h.key);
      deleteSpillFiles();
      const sums = Array.from({ length: 3 }, () => client.submitWith({ pure: false }, byteSum, x));
      expect(await client.gather([h, ...sums])).toEqual([SUM, SUM, SUM, SUM]);
      expect(w.spillStats?.lostKeys).toBe(0);
    });
  }

  it("a client whose id looks like a worker's address, gathering it, waits as any client does", async () => {
    const { cluster, client, x, started } = await spilledX("inline");
    // Held past LOST_INPUT_HELD_MS: a peer's fetch of x would then fail with the loss.
    const h = client.submit(holdsWithClient, x, LOST_INPUT_HELD_MS * 2, true);
    await started(h.key);
    deleteSpillFiles();
    // Its id, "tcp://10.0.0.9:4000-…", was taken for a peer's `who`: its gather failed.
    const odd = await cluster.client({ name: "tcp://10.0.0.9:4000" });
    try {
      expect(odd.id).toMatch(/^tcp:\/\/10\.0\.0\.9:4000-/);
      const { future } = await odd.getDataset<{ future: Future<Uint8Array> }>("x");
      const value = await future.result();
      expect(value.reduce((a, b) => a + b, 0)).toBe(SUM);
      expect(await h).toBe(SUM);
    } finally {
      await odd.close();
    }
  }, 20_000);

  it("fails a reader on another worker, fetching it, with the loss, rather than hanging", async () => {
    const { cluster, client } = await testCluster({
      workers: 2,
      threadsPerWorker: 2,
      taskModules: [CLIENT_TEST_TASKS, SPILL_LOST_TASKS],
      worker: { ...SPILLING, spillDirectory: dir, lostInputHeldMs: HELD_MS },
    });
    const [a, b] = cluster.workers;
    const x = client.submitWith({ workers: [a.address] }, bytes, N);
    await x;
    await client.publishDataset("x", { future: x });
    // byteSum(x) runs on b, which fetches x from a: answered without it, b asked the
    // scheduler where x is, was sent back to a, and asked again, for good.
    const only = [b.address];
    const h = client.submitWith(
      { workers: [a.address] },
      awaitsAnotherReader,
      x,
      "x",
      200,
      true,
      only,
    );
    await eventually(() => a.state.tasks.get(h.key)?.state === "long-running");
    deleteSpillFiles();
    const outcome = await Promise.race([
      h.result(),
      sleep(HELD_MS + 6000).then(() => "still waiting"),
    ]);
    expect(outcome).toMatch(new RegExp(`the spilled value of "${x.key}" is gone from disk`));
    expect(outcome).toContain(`(while fetching its input ${x.key})`);
    await client.unpublishDataset("x");
    expect(await client.submitWith({ workers: only }, byteSum, x)).toBe(SUM);
    expect(a.spillStats?.lostKeys).toBe(0);
    expect(cluster.workers.map((w) => w.status)).toEqual(["running", "running"]);
  }, 20_000);
});
