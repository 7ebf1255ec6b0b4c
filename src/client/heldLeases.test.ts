import { afterEach, describe, expect, it } from "vitest";
import type { Client } from "./client.ts";
import type { HeldLeases } from "./heldLeases.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { holdsLockFor } from "./testTasks.ts";

afterEach(closeTestClusters);

/** Stands for a client frozen (SIGSTOP, a VM paused): its connection open, its refreshes stopped. */
function freeze(client: Client): void {
  (client as unknown as { leases: HeldLeases }).leases.stop();
}

const LEASE_TIMEOUT_MS = 300;

describe("leases not refreshed within the scheduler's leaseTimeoutMs", () => {
  it("of a frozen client expire: a waiter gets its Lock, MultiLock and Semaphore lease", async () => {
    const { cluster, client: a } = await testCluster({
      workers: 0,
      scheduler: { leaseTimeoutMs: LEASE_TIMEOUT_MS },
    });
    const b = await cluster.client();
    const lock = a.lock("L");
    const multi = a.multiLock(["x", "y"]);
    const slots = a.semaphore("S", { maxLeases: 1 });
    expect(await lock.acquire()).toBe(true);
    expect(await multi.acquire()).toBe(true);
    expect(await slots.acquire()).toBe(true);
    freeze(a);
    // Within a few seconds (the timeout, and a third of it for the scheduler's look).
    const [l, m, s] = await Promise.all([
      b.lock("L").acquire({ timeoutMs: 5_000 }),
      b.multiLock(["y"]).acquire({ timeoutMs: 5_000 }),
      b.semaphore("S", { maxLeases: 1 }).acquire({ timeoutMs: 5_000 }),
    ]);
    expect([l, m, s]).toEqual([true, true, true]);
    // The old holder's release is not an error (as in Dask), and takes nothing from b.
    await lock.release();
    await multi.release();
    await slots.release();
    expect(await b.lock("L").locked()).toBe(true);
    expect(await b.semaphore("S").getValue()).toBe(1);
  });

  it("are kept by a client that refreshes them, well past the timeout", async () => {
    const { cluster, client: a } = await testCluster({
      workers: 0,
      scheduler: { leaseTimeoutMs: LEASE_TIMEOUT_MS },
    });
    const b = await cluster.client();
    const lock = a.lock("L");
    const multi = a.multiLock(["x"]);
    expect(await lock.acquire()).toBe(true);
    expect(await multi.acquire()).toBe(true);
    const [l, m] = await Promise.all([
      b.lock("L").acquire({ timeoutMs: 5 * LEASE_TIMEOUT_MS }),
      b.multiLock(["x"]).acquire({ timeoutMs: 5 * LEASE_TIMEOUT_MS }),
    ]);
    expect([l, m]).toEqual([false, false]);
    expect(multi.locked()).toBe(true);
    await lock.release();
    await multi.release();
  });

  it.each(["inproc", "tcp"] as const)(
    "are kept under names an object would not carry, %s (`__proto__`, `constructor`)",
    async (protocol) => {
      const { cluster, client: a } = await testCluster({
        workers: 0,
        protocol,
        scheduler: { leaseTimeoutMs: LEASE_TIMEOUT_MS },
      });
      const b = await cluster.client();
      const lock = a.lock("__proto__");
      const slots = a.semaphore("constructor");
      expect(await lock.acquire()).toBe(true);
      expect(await slots.acquire()).toBe(true);
      const [l, s] = await Promise.all([
        b.lock("__proto__").acquire({ timeoutMs: 5 * LEASE_TIMEOUT_MS }),
        b.semaphore("constructor").acquire({ timeoutMs: 5 * LEASE_TIMEOUT_MS }),
      ]);
      expect([l, s]).toEqual([false, false]);
      await lock.release();
      await slots.release();
    },
  );

  it("a MultiLock whose locks expired says it no longer holds them once a refresh tells it", async () => {
    const { cluster, client: a } = await testCluster({
      workers: 0,
      scheduler: { leaseTimeoutMs: LEASE_TIMEOUT_MS },
    });
    const b = await cluster.client();
    const multi = a.multiLock(["x"]);
    expect(await multi.acquire()).toBe(true);
    const leases = (a as unknown as { leases: HeldLeases }).leases;
    // Its timer stopped, so that only the refresh below tells it.
    const timers = leases as unknown as { clearTimer(): void };
    timers.clearTimer();
    expect(await b.multiLock(["x"]).acquire({ timeoutMs: 5_000 })).toBe(true);
    expect(multi.locked()).toBe(true);
    await leases.refresh();
    expect(multi.locked()).toBe(false);
    await multi.release();
  });

  it("of a task's client: kept while the task holds the lock past the timeout", async () => {
    const { client } = await testCluster({
      workers: 1,
      scheduler: { leaseTimeoutMs: LEASE_TIMEOUT_MS },
    });
    const task = client.submit(holdsLockFor, "T", 5 * LEASE_TIMEOUT_MS);
    const lock = client.lock("T");
    // Once the task holds it.
    while (!(await lock.locked())) await new Promise((r) => setTimeout(r, 20));
    expect(await lock.acquire({ timeoutMs: 3 * LEASE_TIMEOUT_MS })).toBe(false);
    expect(await task).toBe(true);
    expect(await lock.acquire({ timeoutMs: 5_000 })).toBe(true);
  });
});

describe("the scheduler option leaseTimeoutMs", () => {
  it("refuses 0, a negative number and NaN, and takes Infinity (never)", async () => {
    const { resolveSchedulerOptions } = await import("../scheduler/schedulerOptions.ts");
    for (const bad of [0, -1, Number.NaN, "30000"]) {
      expect(() => resolveSchedulerOptions({ leaseTimeoutMs: bad as number })).toThrow(
        /^Scheduler option leaseTimeoutMs must be a number of ms > 0 and at most \d+ \(Infinity: never\), got /,
      );
    }
    expect(resolveSchedulerOptions({ leaseTimeoutMs: Infinity }).leaseTimeoutMs).toBe(Infinity);
    expect(resolveSchedulerOptions({}).leaseTimeoutMs).toBe(30_000);
  });
});
