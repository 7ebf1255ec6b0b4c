import { afterEach, describe, expect, it } from "vitest";
import { getAddressHost } from "../util/address.ts";
import { resolveWorkerOptions } from "../worker/workerOptions.ts";
import { NoWorkerError } from "./errors.ts";
import { closeTestClusters, extraWorker, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("worker names (weft worker --name)", () => {
  it("restrictions and requests may name a worker by its name; a second worker cannot take it", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const special = await extraWorker(cluster, { name: "special" });
    try {
      const futures = [1, 2, 3].map((x) => client.submitWith({ workers: "special" }, inc, x));
      expect(await client.gather(futures)).toEqual([2, 3, 4]);
      for (const f of futures) expect(client.holdersOf(f.key)).toEqual([special.address]);
      const listed = await client.workers();
      // The LocalCluster's own worker is named by its count.
      expect(listed.map((w) => w.name)).toEqual(["0", "special"]);
      expect(Object.keys(await client.runWith({ workers: "special" }, "inc", 1))).toEqual([
        special.address,
      ]);
      const scattered = await client.scatter([1, 2, 3], { workers: "special" });
      for (const f of scattered) expect(client.holdersOf(f.key)).toEqual([special.address]);
      // Refused while the first has it, asked again until connectTimeoutMs.
      await expect(
        extraWorker(cluster, { name: "special", connectTimeoutMs: 1_200 }),
      ).rejects.toThrow(
        `refused to register this worker: the name "special" is taken by the worker at ${special.address}`,
      );
      expect(await client.retireWorkers("special")).toEqual({
        retired: [special.address],
        failed: [],
      });
      // Its results moved; its name is free.
      expect(await client.gather(futures)).toEqual([2, 3, 4]);
      const again = await extraWorker(cluster, { name: "special" });
      // A worker started again before the old one is gone (a nanny's): it asks
      // again until the name is free.
      const next = extraWorker(cluster, { name: "special" });
      await new Promise((r) => setTimeout(r, 700));
      expect(cluster.scheduler.state.workers.size).toBe(2);
      await again.close();
      const successor = await next;
      expect((await client.workers()).find((w) => w.name === "special")?.address).toBe(
        successor.address,
      );
      await successor.close();
    } finally {
      await special.close();
    }
    expect(() => resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1", name: "" })).toThrow(
      'Worker option name must be a non-empty string, got ""',
    );
  });
});

describe("workers= restrictions", () => {
  it("submit, map and compute run where they are told, by address or by host", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const target = cluster.workers[2].address;
    const futures = [1, 2, 3, 4].map((x) => client.submitWith({ workers: target }, inc, x));
    expect(await client.gather(futures)).toEqual([2, 3, 4, 5]);
    for (const f of futures) expect(client.holdersOf(f.key)).toEqual([target]);

    const mapped = client.map(inc, [10, 20], { workers: [target] });
    expect(await client.gather(mapped)).toEqual([11, 21]);
    for (const f of mapped) expect(client.holdersOf(f.key)).toEqual([target]);

    const graph = { a: ["inc", 1], b: ["inc", "a"] };
    const computed = client.compute(graph, { keys: ["b"], workers: [target] });
    expect(await computed.b).toBe(3);
    expect(client.holdersOf(computed.b.key)).toEqual([target]);

    const host = getAddressHost(target);
    expect(await client.submitWith({ workers: [host], pure: false }, inc, 7)).toBe(8);
  });

  it("no named worker: NoWorkerError with the reason, computed once it joins", async () => {
    const { cluster, client } = await testCluster();
    const absent = "inproc://10.9.9.9/1/1";
    const f = client.submitWith({ workers: [absent] }, inc, 1);
    const err = await f.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NoWorkerError);
    expect((err as Error).message).toContain(
      `none of the workers it is restricted to is running (workers=[${absent}])`,
    );
    expect(await client.submitWith({ workers: [absent], allowOtherWorkers: true }, inc, 2)).toBe(3);

    const late = await extraWorker(cluster);
    try {
      const g = client.submitWith({ workers: [late.address] }, inc, 5);
      expect(await g).toBe(6);
      expect(client.holdersOf(g.key)).toEqual([late.address]);
    } finally {
      await late.close();
    }
  });

  it("over TCP too", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp", workers: 2 });
    const target = cluster.workers[1].address;
    const futures = [41, 42, 43, 44].map((x) => client.submitWith({ workers: [target] }, inc, x));
    expect(await client.gather(futures)).toEqual([42, 43, 44, 45]);
    for (const f of futures) expect(client.holdersOf(f.key)).toEqual([target]);
  });

  it("refuses malformed restrictions at the call", async () => {
    const { client } = await testCluster({ workers: 1 });
    expect(() => client.submitWith({ workers: [] }, inc, 1)).toThrow(
      "workers must be a non-empty array of worker addresses, hosts or names, got []",
    );
    expect(() => client.submitWith({ workers: [""] }, inc, 1)).toThrow(/workers must be/);
    expect(() => client.submitWith({ allowOtherWorkers: true }, inc, 1)).toThrow(
      "allowOtherWorkers needs workers",
    );
    expect(() =>
      client.compute({ a: ["inc", 1] }, { workers: "w", allowOtherWorkers: "yes" as never }),
    ).toThrow(/^compute: allowOtherWorkers must be a boolean, got/);
  });
});
