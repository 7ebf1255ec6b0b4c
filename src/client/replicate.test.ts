import { afterEach, describe, expect, it } from "vitest";
import { ClientClosedError, RebalanceError, RemoteTaskError, ReplicateError } from "./errors.ts";
import type { Future } from "./future.ts";
import type { LocalCluster } from "./localCluster.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { boom, inc, slowInc, sum } from "./testTasks.ts";

afterEach(closeTestClusters);

function holders(cluster: LocalCluster, f: Future): string[] {
  const ts = cluster.scheduler.state.tasks.get(f.key);
  return [...(ts?.whoHas ?? [])].map((ws) => ws.address).sort();
}

describe("replicate", () => {
  it("copies scattered data to n workers; it survives the loss of its first holder", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [first] = cluster.workers;
    const [x] = await client.scatter([41], { workers: first.address });
    await client.replicate(x, { n: 2 });
    const held = holders(cluster, x);
    expect(held).toHaveLength(2);
    expect(held).toContain(first.address);
    // The copy went through the worker's state machine: AcquireReplicasEvent, then add-keys.
    const copier = cluster.workers.find(
      (w) => w.address !== first.address && held.includes(w.address),
    );
    expect(
      copier?.state.stimulusLog.toArray().some((ev) => ev.cls === "AcquireReplicasEvent"),
    ).toBe(true);
    await first.close();
    await eventually(() => !cluster.scheduler.state.workers.has(first.address), 5000, "w1 gone");
    expect(await x).toBe(41);
    expect(await client.submit(inc, x)).toBe(42);
    // n no more than the holders there: nothing to do.
    await client.replicate([x], { n: 1 });
    expect(holders(cluster, x)).toEqual([copier?.address]);
  });

  it("drops the copies beyond n, on the workers themselves too", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [x] = await client.scatter([7], { broadcast: true });
    expect(holders(cluster, x)).toHaveLength(3);
    await client.replicate(x, { n: 1 });
    const [kept] = holders(cluster, x);
    expect(holders(cluster, x)).toEqual([kept]);
    // Each other worker took remove-replicas through its state machine and let the value go.
    await eventually(
      () => cluster.workers.every((w) => w.state.data.has(x.key) === (w.address === kept)),
      5000,
      "the dropped copies gone from the workers",
    );
    for (const w of cluster.workers) {
      if (w.address === kept) continue;
      expect(w.state.stimulusLog.toArray().some((ev) => ev.cls === "RemoveReplicasEvent")).toBe(
        true,
      );
    }
    expect(await client.submit(inc, x)).toBe(8);
    expect(await x).toBe(7);
  });

  it("without n, every running worker gets a copy; workers= limits them", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const f = client.submit(sum, [1, 2, 3]);
    await client.replicate([f]);
    expect(holders(cluster, f)).toEqual(cluster.workers.map((w) => w.address).sort());
    const g = client.submitWith({ workers: cluster.workers[0].address }, inc, 1);
    await client.replicate(g, {
      workers: [cluster.workers[0].address, cluster.workers[1].address],
    });
    expect(holders(cluster, g)).toEqual(
      [cluster.workers[0].address, cluster.workers[1].address].sort(),
    );
  });

  it("rejects with the error of a future that failed, and refuses bad input", async () => {
    const { cluster, client } = await testCluster();
    const bad = client.submit(boom, "no");
    await expect(client.replicate(bad)).rejects.toThrow(RemoteTaskError);
    await expect(client.replicate([], { n: 0 })).rejects.toThrow(
      "replicate: n must be an integer ≥ 1, got 0",
    );
    await expect(client.replicate([], { workers: [] })).rejects.toThrow(
      "replicate: workers must be a non-empty array of worker addresses, hosts or names, got []",
    );
    await expect(client.replicate([1 as never])).rejects.toThrow(
      "replicate: expected futures of this client, got 1",
    );
    const [x] = await client.scatter([1]);
    await expect(client.replicate(x, { workers: "inproc://nowhere/1" })).rejects.toThrow(
      new ReplicateError([
        { key: x.key, reason: "none of the workers inproc://nowhere/1 is running" },
      ]),
    );
    expect(cluster.scheduler.state.replications.size).toBe(0);
    await client.close();
    await expect(client.replicate(x)).rejects.toThrow(ClientClosedError);
  });

  it("over TCP", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp", workers: 2 });
    const [big] = await client.scatter([new Float64Array(50_000).fill(2)]);
    await client.replicate(big);
    expect(holders(cluster, big)).toHaveLength(2);
    for (const w of cluster.workers) expect((w.state.data.get(big.key) as Float64Array)[0]).toBe(2);
    // And the trim, whoHas and rebalance, over the wire too.
    await client.replicate(big, { n: 1 });
    const [kept] = holders(cluster, big);
    expect(await client.whoHas(big)).toEqual({ [big.key]: [kept] });
    const parts = await client.scatter(
      [1, 2, 3].map((k) => new Float64Array(1000).fill(k)),
      {
        workers: kept,
      },
    );
    // big keeps its worker the fuller: all three parts go to the other.
    expect(await client.rebalance(parts)).toBe(3);
    const hasWhat = await client.hasWhat();
    expect(hasWhat[kept]).toEqual([big.key]);
    expect(Object.values(hasWhat).map((keys) => keys.length)).toContain(3);
  });
});

describe("rebalance", () => {
  /** Bytes each worker holds, as the scheduler has them, in the cluster's worker order. */
  function held(cluster: LocalCluster): number[] {
    return cluster.workers.map((w) => cluster.scheduler.state.workers.get(w.address)?.nbytes ?? 0);
  }

  it("moves results from the fullest worker to the others, copy first, then drop", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [first] = cluster.workers;
    const values = [8, 6, 4, 2, 2, 2].map((k) => new Float64Array(k * 1000).fill(k));
    const fs = await client.scatter(values, { workers: first.address });
    const before = held(cluster);
    expect(before[1] + before[2]).toBe(0);
    const moved = await client.rebalance();
    expect(moved).toBeGreaterThan(0);
    const after = held(cluster);
    expect(after.reduce((a, b) => a + b)).toBe(before[0]); // moved, not copied
    expect(Math.max(...after)).toBeLessThan(before[0]);
    expect(after[1] + after[2]).toBeGreaterThan(0);
    // Each key is held once, and the sender's state machine dropped what it gave.
    for (const f of fs) expect(holders(cluster, f)).toHaveLength(1);
    await eventually(
      () =>
        first.state.data.size === fs.filter((f) => holders(cluster, f)[0] === first.address).length,
      5000,
      "the moved values gone from the sender",
    );
    expect(first.state.stimulusLog.toArray().some((ev) => ev.cls === "RemoveReplicasEvent")).toBe(
      true,
    );
    expect(await client.gather(fs)).toEqual(values);
    // Balanced as far as Dask's rule goes: another call moves nothing.
    expect(await client.rebalance()).toBe(0);
  });

  it("moves only the futures given, among the workers given; refuses bad input", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [first, second, third] = cluster.workers;
    const fs = await client.scatter(
      [1, 2, 3, 4].map((k) => new Float64Array(1000).fill(k)),
      {
        workers: first.address,
      },
    );
    expect(
      await client.rebalance(fs.slice(0, 2), { workers: [first.address, second.address] }),
    ).toBe(2);
    // Both named futures go to the second worker (two of four equal values each), the others stay.
    expect(fs.map((f) => holders(cluster, f)[0])).toEqual([
      second.address,
      second.address,
      first.address,
      first.address,
    ]);
    expect(held(cluster)[2]).toBe(0);
    expect(third.state.data.size).toBe(0);
    await expect(client.rebalance([], {})).resolves.toBe(0);
    await expect(client.rebalance(fs, { workers: [] })).rejects.toThrow(
      "rebalance: workers must be a non-empty array of worker addresses, hosts or names, got []",
    );
    await expect(client.rebalance([1 as never])).rejects.toThrow(
      "rebalance: expected futures of this client, got 1",
    );
    await expect(client.rebalance(client.submit(boom, "no"))).rejects.toThrow(RemoteTaskError);
    const [x] = await client.scatter([1]);
    await expect(client.rebalance(x, { workers: "inproc://nowhere/1" })).rejects.toThrow(
      new RebalanceError([
        { key: x.key, reason: "none of the workers inproc://nowhere/1 is running" },
      ]),
    );
    expect(cluster.scheduler.state.replications.size).toBe(0);
  });
});

describe("retireWorkers", () => {
  it("moves what only the worker holds, then the worker closes and is not replaced", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [first, second] = cluster.workers;
    const [x] = await client.scatter([new Float64Array(1000).fill(3)], { workers: first.address });
    const y = client.submitWith({ workers: first.address }, inc, 1);
    await y;
    const answer = await client.retireWorkers(first.address);
    expect(answer).toEqual({ retired: [first.address], failed: [] });
    await eventually(() => first.status === "closed", 5000, "the retired worker closed");
    expect(first.fault).toBeNull();
    expect(cluster.scheduler.state.workers.has(first.address)).toBe(false);
    expect(holders(cluster, x)).toHaveLength(1);
    expect(holders(cluster, x)).not.toContain(first.address);
    // Its results are still there, and the cluster goes on with the others.
    expect(((await x) as Float64Array)[0]).toBe(3);
    expect(await y).toBe(2);
    expect(await client.submit(inc, y)).toBe(3);
    expect(cluster.workers).toContain(first); // its slot keeps the closed worker
    // The last two: one can go, the other has nowhere to put its data.
    const both = await client.retireWorkers([second.address, cluster.workers[2].address]);
    expect(both.retired.length + both.failed.length).toBe(2);
    expect(both.failed.length).toBeGreaterThanOrEqual(1); // x is on one of them
    for (const f of both.failed) {
      expect(f.reason).toMatch(/^no other running worker can take its copy of /);
    }
    expect(await client.submit(inc, 10)).toBe(11);
    await expect(client.retireWorkers([])).rejects.toThrow(
      "retireWorkers: workers must be a non-empty array of worker addresses, hosts or names, got []",
    );
  });

  it("given { n }, retires the n workers the scheduler picks: idle, holding least", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [keeper] = cluster.workers;
    const [x] = await client.scatter([41], { workers: keeper.address });
    const answer = await client.retireWorkers({ n: 2 });
    expect(answer.failed).toEqual([]);
    expect(answer.retired.sort()).toEqual(
      cluster.workers
        .filter((w) => w !== keeper)
        .map((w) => w.address)
        .sort(),
    );
    expect(await client.submit(inc, x)).toBe(42);
    await expect(client.retireWorkers({ n: 0 })).rejects.toThrow(
      "retireWorkers: n must be an integer ≥ 1, got 0",
    );
  });

  it("given nothing, retires the idle workers the cluster can spare", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [busy] = cluster.workers;
    const running = client.submitWith({ workers: busy.address, pure: false }, slowInc, 1, 300);
    await eventually(() => busy.state.executingCount > 0, 5000, "the task running");
    // Nothing held, no memory limits: every idle worker goes.
    const answer = await client.retireWorkers();
    expect(answer.retired.sort()).toEqual(
      cluster.workers
        .filter((w) => w !== busy)
        .map((w) => w.address)
        .sort(),
    );
    expect(await running).toBe(2);
    // Now a result is held: without memory limits, no worker can be spared.
    expect(await client.retireWorkers()).toEqual({ retired: [], failed: [] });
  });
});
