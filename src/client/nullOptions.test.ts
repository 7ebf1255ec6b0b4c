/**
 * One rule for the options Dask defaults to `None`: null means the default, as
 * undefined does. Before, `maxLeases: null` was taken and `retries: null`,
 * `replicate`'s `n: null` or `getTaskStream`'s `count: null` refused.
 */

import { afterEach, describe, expect, it } from "vitest";
import { wait } from "./completion.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("null for an option Dask defaults to None is the default", () => {
  it("in submissions: key, retries, resources and workers", async () => {
    const { client } = await testCluster();
    const nulls = { key: null, retries: null, resources: null, workers: null };
    const f = client.submitWith(nulls, inc, 1);
    expect(f.key).toBe(client.submit(inc, 1).key);
    expect(await f).toBe(2);
    // map refuses a key (each item's task has its own), but not a null one.
    expect(await client.gather(client.map(inc, [1, 2], nulls as never))).toEqual([2, 3]);
    const graph = { a: ["inc", 1] as ["inc", number] };
    const computed = client.compute(graph, { retries: null, resources: null, workers: null });
    expect(await computed.a).toBe(2);
    expect(await client.get(graph, { retries: null, resources: null, workers: null })).toEqual({
      a: 2,
    });
  });

  it("in the calls about data and workers", async () => {
    const { cluster, client } = await testCluster();
    const addresses = cluster.workers.map((w) => w.address).sort();
    const [x] = await client.scatter([5], { workers: null });
    await client.replicate([x], { n: null, workers: null });
    expect(await client.whoHas(x)).toEqual({ [x.key]: addresses });
    expect(await client.rebalance(null, { workers: null })).toBeGreaterThanOrEqual(0);
    expect(Object.keys(await client.hasWhat(null)).sort()).toEqual(addresses);
    expect(Object.keys(await client.processing(null)).sort()).toEqual(addresses);
    expect(Object.keys(await client.nthreads(null)).sort()).toEqual(addresses);
    expect(await client.whoHas(null)).toHaveProperty(x.key);
    expect(await client.nbytes(null)).toHaveProperty(x.key);
    expect(Object.keys(await client.runWith({ workers: null }, inc, 1)).sort()).toEqual(addresses);
    expect(await client.getTaskStream({ since: null, count: null })).toEqual(
      await client.getTaskStream(),
    );
    expect(Array.isArray(await client.getSchedulerLogs({ n: null }))).toBe(true);
    const logs = await client.getWorkerLogs({ n: null, workers: null });
    expect(Object.keys(logs).sort()).toEqual(addresses);
    expect(await client.waitForWorkers(2, { timeoutMs: null })).toHaveLength(2);
    expect((await wait(x, { timeout: null })).done).toEqual([x]);
    const profiled = await client.profile(() => 7, { workers: null, path: null });
    expect(profiled.value).toBe(7);
  });

  it("the client's name, whose type and docs take null", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const named = await cluster.client({ name: null });
    expect(named.id).toMatch(/^client-[0-9a-f]{8}$/);
    await named.close();
  });

  it("in the coordination primitives: counts and timeouts", async () => {
    const { client } = await testCluster({ workers: 1 });
    const lock = client.lock("L");
    expect(await lock.acquire({ timeoutMs: null })).toBe(true);
    await lock.release();
    const sem = client.semaphore("S", { maxLeases: null });
    expect(await sem.acquire({ timeoutMs: null })).toBe(true);
    await sem.release();
    const both = client.multiLock(["A", "B"]);
    expect(await both.acquire({ numLocks: null, timeoutMs: null })).toBe(true);
    await both.release();
    const event = client.event("E");
    await event.set();
    expect(await event.wait({ timeoutMs: null })).toBe(true);
    const variable = client.variable<number>("V");
    await variable.set(3);
    expect(await variable.get({ timeoutMs: null })).toBe(3);
    const queue = client.queue<number>("Q", { maxsize: null });
    await queue.put(4, { timeoutMs: null });
    expect(await queue.get({ timeoutMs: null })).toBe(4);
    const sub = await client.sub<number>("T", { maxBuffered: null });
    client.pub<number>("T").put(8);
    expect(await sub.get({ timeoutMs: null })).toBe(8);
    sub.close();
  });
});
