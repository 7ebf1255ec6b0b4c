import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { boom, inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("Client.getTaskStream", () => {
  it("gives the task runs the workers reported: where, when, how they ended", async () => {
    const { cluster, client } = await testCluster();
    const before = await client.getTaskStream();
    const since = Date.now() / 1000;
    const values = await client.gather(client.map(inc, [1, 2, 3, 4]));
    expect(values).toEqual([2, 3, 4, 5]);
    const failed = client.submit(boom, "no");
    await expect(failed).rejects.toThrow(/no/);
    const runs = await client.getTaskStream({ since });
    expect(runs).toHaveLength(5);
    const workers = new Set(cluster.workers.map((w) => w.address));
    for (const r of runs) {
      expect(workers.has(r.worker)).toBe(true);
      const compute = r.startstops.find((ss) => ss.action === "compute");
      expect(compute?.stop).toBeGreaterThanOrEqual(compute?.start ?? Number.NaN);
      expect(compute?.stop).toBeGreaterThanOrEqual(since - 1);
    }
    expect(
      runs
        .filter((r) => r.status === "OK")
        .map((r) => r.key)
        .sort(),
    ).toEqual(
      client
        .map(inc, [1, 2, 3, 4])
        .map((f) => f.key)
        .sort(),
    );
    expect(runs.filter((r) => r.status === "error").map((r) => r.key)).toEqual([failed.key]);
    expect(runs.find((r) => r.status === "OK")?.nbytes).toBeGreaterThan(0);
    expect(await client.getTaskStream({ count: 1 })).toEqual([runs[4]]);
    expect((await client.getTaskStream()).length).toBe(before.length + 5);
    await expect(client.getTaskStream({ since: Number.NaN })).rejects.toThrow(
      /since must be a number of seconds/,
    );
    await expect(client.getTaskStream({ count: -1 })).rejects.toThrow(/count must be an integer/);
  });

  it("keeps nothing with the scheduler's taskStreamLength 0", async () => {
    const { client } = await testCluster({ scheduler: { taskStreamLength: 0 } });
    await client.submit(inc, 1);
    expect(await client.getTaskStream()).toEqual([]);
  });
});
