import { afterEach, describe, expect, it } from "vitest";
import type { LocalClusterOptions } from "./localCluster.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

/**
 * Two single-threaded workers; 12 tasks of 40 ms all placed on the first (a
 * loose restriction to it: the second may run them too). Returns how many
 * ran on each worker, by where their results are, and the scheduler's counts.
 */
async function backlogOnOneWorker(o: LocalClusterOptions) {
  const { cluster, client } = await testCluster(o);
  const [first, second] = cluster.workers.map((w) => w.address);
  const futures = Array.from({ length: 12 }, (_, i) =>
    client.submitWith({ workers: [first], allowOtherWorkers: true, pure: false }, slowInc, i, 40),
  );
  expect(await client.gather(futures)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  const holders = Object.values(await client.whoHas(futures)).map((h) => h.join(","));
  const counters = await client.counters();
  return {
    onFirst: holders.filter((h) => h === first).length,
    onSecond: holders.filter((h) => h === second).length,
    counters,
  };
}

describe("work stealing on a LocalCluster", () => {
  it("an idle worker takes tasks from a backlog on another", async () => {
    const { onFirst, onSecond, counters } = await backlogOnOneWorker({
      scheduler: { workStealingIntervalMs: 20 },
    });
    expect(onFirst + onSecond).toBe(12);
    expect(onFirst).toBeGreaterThan(0);
    expect(onSecond).toBeGreaterThan(0);
    expect(counters.stealsConfirmed).toBeGreaterThan(0);
    expect(counters.stealsRequested).toBeGreaterThanOrEqual(counters.stealsConfirmed);
  });

  it("with workStealing false the backlog stays where it was placed", async () => {
    const { onFirst, counters } = await backlogOnOneWorker({
      scheduler: { workStealing: false, workStealingIntervalMs: 20 },
    });
    expect(onFirst).toBe(12);
    expect(counters.stealsRequested).toBe(0);
  });
});
