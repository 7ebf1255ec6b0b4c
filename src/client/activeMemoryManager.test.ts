import { afterEach, describe, expect, it } from "vitest";
import { ActiveMemoryManagerClient } from "./amm.ts";
import { ClientClosedError } from "./errors.ts";
import type { LocalClusterOptions } from "./localCluster.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** Poll `holders` until `done` says so or `ms` pass; the last holders seen. */
async function waitForHolders(
  holders: () => Promise<string[]>,
  done: (h: string[]) => boolean,
  ms: number,
): Promise<string[]> {
  const deadline = Date.now() + ms;
  let seen = await holders();
  while (!done(seen) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    seen = await holders();
  }
  return seen;
}

/**
 * Two workers; `x` computed on the first, then used by a task restricted to
 * the second, which so fetches a copy. The client keeps `x`. Returns the
 * holders of `x` once `done` says so (or after `ms`), and the counts.
 */
async function inputCopiedToOtherWorker(
  o: LocalClusterOptions,
  done: (h: string[]) => boolean,
  ms: number,
) {
  const { cluster, client } = await testCluster(o);
  const [first, second] = cluster.workers.map((w) => w.address);
  const x = client.submitWith({ workers: [first] }, inc, 1);
  const y = client.submitWith({ workers: [second] }, inc, x);
  expect(await client.gather([x, y])).toEqual([2, 3]);
  const holders = async () => [...((await client.whoHas([x]))[x.key] ?? [])].sort();
  const seen = await waitForHolders(holders, done, ms);
  return { seen, first, second, counters: await client.counters(), client, holders, cluster };
}

describe("the active memory manager on a LocalCluster", () => {
  it("drops the copy a worker fetched as an input once no task needs it", async () => {
    const { seen, counters } = await inputCopiedToOtherWorker(
      { scheduler: { activeMemoryManagerIntervalMs: 50 } },
      (h) => h.length === 1,
      4000,
    );
    expect(seen).toHaveLength(1);
    expect(counters.replicasDropped).toBeGreaterThanOrEqual(1);
  });

  it("with activeMemoryManager false both copies stay", async () => {
    const { seen, first, second, counters } = await inputCopiedToOtherWorker(
      { scheduler: { activeMemoryManager: false, activeMemoryManagerIntervalMs: 50 } },
      // Waits for a drop that must not come, through ten would-be rounds.
      (h) => h.length < 2,
      500,
    );
    expect(seen).toEqual([first, second].sort());
    expect(counters.replicasDropped).toBe(0);
  });
});

describe("client.amm: the active memory manager operated at run time", () => {
  it("runOnce drops the copy no task needs and says how many; a second finds nothing", async () => {
    const { seen, client, holders, counters } = await inputCopiedToOtherWorker(
      { scheduler: { activeMemoryManager: false } },
      (h) => h.length === 2,
      4000,
    );
    expect(seen).toHaveLength(2);
    expect(counters.replicasDropped).toBe(0);
    expect(await client.amm.running()).toBe(false);
    expect(await client.amm.runOnce()).toBe(1);
    // The scheduler forgot the replica with the round.
    expect(await holders()).toHaveLength(1);
    expect(await client.amm.runOnce()).toBe(0);
    expect((await client.counters()).replicasDropped).toBe(1);
    expect(await client.amm.running()).toBe(false);
  });

  it("start runs the rounds where the scheduler was started without them; stop ends them", async () => {
    const { cluster, client, holders, first, second } = await inputCopiedToOtherWorker(
      { scheduler: { activeMemoryManager: false, activeMemoryManagerIntervalMs: 50 } },
      (h) => h.length === 2,
      4000,
    );
    expect(await client.amm.status()).toEqual({ running: false, intervalMs: 50 });
    expect(await client.amm.start()).toEqual({ running: true, intervalMs: 50 });
    // Already running: nothing changes.
    expect(await client.amm.start()).toEqual({ running: true, intervalMs: 50 });
    expect(await client.amm.running()).toBe(true);
    expect(cluster.scheduler.amm.running).toBe(true);
    // Polled with a generous deadline: a round of the timer drops the copy.
    expect(await waitForHolders(holders, (h) => h.length === 1, 4000)).toHaveLength(1);
    expect(await client.amm.stop()).toEqual({ running: false, intervalMs: 50 });
    expect(await client.amm.running()).toBe(false);
    expect(await client.amm.status()).toEqual({ running: false, intervalMs: 50 });
    // Stopped: a new copy stays through ten would-be rounds, and runOnce still drops it.
    const z = client.submitWith({ workers: [first] }, inc, 10);
    const w = client.submitWith({ workers: [second] }, inc, z);
    expect(await client.gather([z, w])).toEqual([11, 12]);
    const zHolders = async () => [...((await client.whoHas([z]))[z.key] ?? [])];
    expect(await waitForHolders(zHolders, (h) => h.length < 2, 500)).toHaveLength(2);
    expect(await client.amm.runOnce()).toBe(1);
    expect(await zHolders()).toHaveLength(1);
  });

  it("each method rejects with a ClientClosedError once the client is closed", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.close();
    const amm = client.amm;
    const calls: (() => Promise<unknown>)[] = [
      () => amm.start(),
      () => amm.stop(),
      () => amm.running(),
      () => amm.status(),
      () => amm.runOnce(),
    ];
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(ClientClosedError);
    // Nothing reached the scheduler: the rounds run as they did.
    expect(cluster.scheduler.amm.running).toBe(true);
  });
});

describe("ActiveMemoryManagerClient", () => {
  it("a status is an object of its own, with the status fields only", async () => {
    const answer = { running: true, intervalMs: 250, rounds: 3 };
    const amm = new ActiveMemoryManagerClient(async () => answer);
    for (const status of [await amm.status(), await amm.start(), await amm.stop()]) {
      expect(status).toStrictEqual({ running: true, intervalMs: 250 });
      expect(status).not.toBe(answer);
    }
  });
});
