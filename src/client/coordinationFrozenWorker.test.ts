/**
 * A worker whose task holds a lock freezes (SIGSTOP, a VM paused: its
 * connections stay open, nothing answers) and is removed by the scheduler for
 * going silent, or for its connection breaking: the lock is let go with it,
 * rather than held for as long as the process stays frozen, which left every
 * task needing it (the frozen worker's own, rescheduled elsewhere, among them)
 * waiting for good.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CommClosedError } from "../comm/errors.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { failsHoldingLock } from "./testTasks.ts";
import {
  FROZEN_WORKER_TTL_MS,
  killWorkerProcesses,
  workerProcessJoining,
} from "./testWorkerProcess.ts";

afterEach(async () => {
  killWorkerProcesses();
  await closeTestClusters();
});

describe("a lock held by a task of a worker that froze", () => {
  for (const executor of ["inline", "threads"] as const) {
    it(`is let go when the scheduler removes the worker (${executor})`, async () => {
      const { cluster, client } = await testCluster({
        protocol: "tcp",
        workers: 1,
        scheduler: { workerTtlMs: FROZEN_WORKER_TTL_MS },
      });
      const { child, address } = await workerProcessJoining(cluster, client, executor);
      const held = client.submitWith(
        { workers: address, allowOtherWorkers: false },
        failsHoldingLock,
        "held",
      );
      await expect(held).rejects.toThrow("failed holding held");
      expect(await client.lock("held").locked()).toBe(true);
      const scheduler = cluster.scheduler;
      expect(scheduler.workerClients.count(address)).toBe(1);
      child.kill("SIGSTOP");
      await eventually(() => scheduler.state.workers.size === 1, 30_000, "removed");
      // Before, it stayed held as long as the process was frozen.
      expect(await client.lock("held").acquire({ timeoutMs: 10_000 })).toBe(true);
      expect(scheduler.workerClients.count(address)).toBe(0);
      expect([...scheduler.router.clients.keys()]).toEqual([client.id]);
    }, 120_000);
  }
});

describe("a lock held by a task of a worker whose connection broke", () => {
  it("is let go with the worker, which may live on (frozen, cut off for not reading)", async () => {
    // Heartbeats checked too seldom to matter here.
    const { cluster, client } = await testCluster({
      protocol: "tcp",
      workers: 1,
      scheduler: { workerTtlMs: 600_000 },
    });
    const { child, address } = await workerProcessJoining(cluster, client);
    const held = client.submitWith(
      { workers: address, allowOtherWorkers: false },
      failsHoldingLock,
      "held",
    );
    await expect(held).rejects.toThrow("failed holding held");
    const scheduler = cluster.scheduler;
    expect(scheduler.workerClients.count(address)).toBe(1);
    child.kill("SIGSTOP");
    // As the stall timeout ends the connection of a worker that stopped reading.
    scheduler.router.workers.get(address)?.comm.abort(new CommClosedError("stalled"));
    await eventually(() => scheduler.state.workers.size === 1, 10_000, "removed");
    expect(await client.lock("held").acquire({ timeoutMs: 5_000 })).toBe(true);
    expect(scheduler.workerClients.count(address)).toBe(0);
  }, 60_000);
});
