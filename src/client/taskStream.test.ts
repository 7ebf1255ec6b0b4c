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
    expect(await client.getTaskStream({ count: 0 })).toEqual([]);
    // None ends an hour from now.
    expect(await client.getTaskStream({ since: Date.now() / 1000 + 3600 })).toEqual([]);
    expect((await client.getTaskStream()).length).toBe(before.length + 5);
    await expect(client.getTaskStream({ since: Number.NaN })).rejects.toThrow(
      /since must be a number of seconds/,
    );
    await expect(client.getTaskStream({ count: -1 })).rejects.toThrow(/count must be an integer/);
  });

  for (const protocol of ["inproc", "tcp"] as const) {
    it(`records a fetch from a peer on the task it was for: a transfer, from that peer (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ protocol });
      const [first, second] = cluster.workers.map((w) => w.address);
      const since = Date.now() / 1000;
      const x = client.submitWith({ workers: [first] }, inc, 1);
      const y = client.submitWith({ workers: [second] }, inc, x);
      expect(await y).toBe(3);
      const runs = await client.getTaskStream({ since });
      const ofY = runs.find((r) => r.key === y.key);
      expect(ofY?.worker).toBe(second);
      const transfer = ofY?.startstops.find((ss) => ss.action === "transfer");
      expect(transfer).toMatchObject({ action: "transfer", source: first });
      const compute = ofY?.startstops.find((ss) => ss.action === "compute");
      expect(transfer?.stop).toBeGreaterThanOrEqual(transfer?.start ?? Number.NaN);
      expect(transfer?.stop).toBeLessThanOrEqual((compute?.start ?? 0) + 0.001);
      // The task whose value was fetched ran on the first worker: nothing moved for it.
      const ofX = runs.find((r) => r.key === x.key);
      expect(ofX?.startstops.map((ss) => ss.action)).toEqual(["compute"]);
    });
  }

  it("records inputs slow to read (spilled ones read from disk) on the task: a disk-read", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const since = Date.now() / 1000;
    const x = client.submit(inc, 1);
    await x;
    // Reading x takes 20 ms, as a value read back from disk may (Dask records past 5 ms).
    const data = cluster.workers[0].state.data;
    const get = data.get.bind(data);
    data.get = (key: string) => {
      if (key === x.key) for (const t = Date.now(); Date.now() - t < 20; );
      return get(key);
    };
    const y = client.submit(inc, x);
    expect(await y).toBe(3);
    const ofY = (await client.getTaskStream({ since })).find((r) => r.key === y.key);
    const read = ofY?.startstops.find((ss) => ss.action === "disk-read");
    expect((read?.stop ?? 0) - (read?.start ?? 0)).toBeGreaterThanOrEqual(0.019);
    // Read fast, nothing is recorded.
    const ofX = (await client.getTaskStream({ since })).find((r) => r.key === x.key);
    expect(ofX?.startstops.map((ss) => ss.action)).toEqual(["compute"]);
  });

  it("keeps nothing with the scheduler's taskStreamLength 0", async () => {
    const { client } = await testCluster({ scheduler: { taskStreamLength: 0 } });
    await client.submit(inc, 1);
    expect(await client.getTaskStream()).toEqual([]);
  });
});
