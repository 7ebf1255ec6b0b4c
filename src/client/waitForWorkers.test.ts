import { afterEach, describe, expect, it } from "vitest";
import { ClientClosedError, WorkersTimeoutError } from "./errors.ts";
import { closeTestClusters, extraWorker, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

describe("Client.waitForWorkers", () => {
  it("resolves once enough workers run, and times out with the count it saw", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    expect((await client.waitForWorkers(1)).map((w) => w.address)).toEqual([
      cluster.workers[0].address,
    ]);
    expect(await client.waitForWorkers(0)).toHaveLength(1);

    const err = await client.waitForWorkers(2, { timeoutMs: 150, pollMs: 20 }).catch((e) => e);
    expect(err).toBeInstanceOf(WorkersTimeoutError);
    expect(err).toMatchObject({ wanted: 2, running: 1, timeoutMs: 150 });
    expect((err as Error).message).toBe("only 1 of 2 workers running after 150 ms");

    const waiting = client.waitForWorkers(2, { pollMs: 20 });
    const late = await extraWorker(cluster);
    try {
      const workers = await waiting;
      expect(workers.map((w) => w.address)).toContain(late.address);
    } finally {
      await late.close();
    }
  });

  it("refuses bad arguments, and rejects once the client is closed", async () => {
    const { client } = await testCluster({ workers: 1 });
    await expect(client.waitForWorkers(-1)).rejects.toThrow(
      "waitForWorkers: n must be an integer ≥ 0, got -1",
    );
    await expect(client.waitForWorkers(1.5)).rejects.toThrow(/n must be an integer ≥ 0/);
    await expect(client.waitForWorkers(1, { timeoutMs: Number.NaN })).rejects.toThrow(
      /timeoutMs must be a number of milliseconds ≥ 0, got NaN/,
    );
    await expect(client.waitForWorkers(1, { pollMs: 0 })).rejects.toThrow(
      /pollMs must be a number of milliseconds > 0 and at most 2147483647, got 0/,
    );
    const waiting = client.waitForWorkers(5, { pollMs: 20 });
    await client.close();
    await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
  });
});
