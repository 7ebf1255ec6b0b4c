import { afterEach, describe, expect, it } from "vitest";
import { NoWorkerError } from "./errors.ts";
import type { LocalCluster } from "./localCluster.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { boom, inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** The states `key` went through on the scheduler, in order. */
function journey(cluster: LocalCluster, key: string): string[] {
  return cluster.scheduler.state.story(key).map((entry) => entry[2]);
}

/** True once no state machine of the cluster knows `key`. */
function forgottenEverywhere(cluster: LocalCluster, key: string): boolean {
  return (
    !cluster.scheduler.state.tasks.has(key) && cluster.workers.every((w) => !w.state.tasks.has(key))
  );
}

describe("fireAndForget", () => {
  it("runs the tasks to the end after their client closed, then lets the results go", async () => {
    const { cluster, client } = await testCluster();
    const x = client.submit(slowInc, 1, 150);
    const y = client.submit(inc, x);
    client.fireAndForget(y);
    await client.close();
    await eventually(() => forgottenEverywhere(cluster, y.key), 5000, "y done and forgotten");
    expect(journey(cluster, x.key)).toContain("memory");
    expect(journey(cluster, y.key)).toEqual(
      expect.arrayContaining(["processing", "memory", "forgotten"]),
    );
    expect(forgottenEverywhere(cluster, x.key)).toBe(true);
  });

  it("without it, closing the client stops the task (the test above depends on the call)", async () => {
    const { cluster, client } = await testCluster();
    const x = client.submit(slowInc, 1, 150);
    await eventually(() => cluster.scheduler.state.tasks.get(x.key)?.state === "processing");
    await client.close();
    await eventually(() => forgottenEverywhere(cluster, x.key), 5000, "x forgotten");
    expect(journey(cluster, x.key)).not.toContain("memory");
  });

  it("released futures no longer stop the task; the futures stay usable meanwhile", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(slowInc, 10, 100);
    client.fireAndForget([f, f]);
    expect(await f).toBe(11);
    expect(cluster.scheduler.state.tasks.get(f.key)?.state).toBe("memory");
    f.release();
    await eventually(() => forgottenEverywhere(cluster, f.key), 5000, "f forgotten");
  });

  it("a failing task is let go too, and the client can still use its future", async () => {
    const { cluster, client } = await testCluster();
    const bad = client.submit(boom, "fire");
    client.fireAndForget(bad);
    await expect(bad).rejects.toThrow("fire");
    bad.release();
    await eventually(() => forgottenEverywhere(cluster, bad.key), 5000, "bad forgotten");
  });

  it("a task no worker can run yet is kept too, and runs once one can", async () => {
    const { cluster, client } = await testCluster();
    const gpu = client.submitWith({ resources: { GPU: 1 } }, inc, 1);
    await expect(gpu).rejects.toThrow(NoWorkerError);
    expect(gpu.status).toBe("no-worker");
    client.fireAndForget(gpu);
    await client.close();
    const worker = await extraWorker(cluster, { resources: { GPU: 1 } });
    try {
      await eventually(() => forgottenEverywhere(cluster, gpu.key), 5000, "gpu done and forgotten");
      expect(journey(cluster, gpu.key)).toEqual(
        expect.arrayContaining(["no-worker", "processing", "memory", "forgotten"]),
      );
    } finally {
      await worker.close();
    }
  });

  it("skips futures already done and refuses released or foreign ones", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const done = client.submit(inc, 1);
    await done;
    client.fireAndForget(done); // nothing to do: no stand-in is made
    expect(cluster.scheduler.state.clients.has("fire-and-forget")).toBe(false);
    const gone = client.submit(inc, 2);
    gone.release();
    expect(() => client.fireAndForget(gone)).toThrow(/was released/);
    expect(() => other.fireAndForget(done)).toThrow(/futures of this client/);
    expect(() => client.fireAndForget("xy" as never)).toThrow(
      'fireAndForget: expected futures of this client, got "xy"',
    );
    await other.close();
    await client.close();
    expect(() => client.fireAndForget(done)).toThrow(/closed/);
  });
});
