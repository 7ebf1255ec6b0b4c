import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "../client/client.ts";
import { closeTestClusters, eventually, testCluster } from "../client/testCluster.ts";
import type { CpuProfiler } from "../worker/profiler.ts";
import { ClientProfiles } from "./clientProfiles.ts";

afterAll(closeTestClusters);

/** What a test reads of a worker's profiler. */
type Profiled = { profiler: CpuProfiler };

/** Cut `client`'s connection to the scheduler without a word, as its process killed (SIGKILL) would. */
function killOutright(client: Client): void {
  (client as unknown as { conn: { comm: { abort(): void } } }).conn.comm.abort();
}

describe("the profiles of a client removed", () => {
  it("are discarded on the workers and the scheduler at once, so another client's profile is taken", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const dying = await cluster.client();
    const workers = cluster.workers as unknown as Profiled[];
    // Profiling for as long as its code runs: forever, unless stopped.
    void dying.profile(() => new Promise(() => {}), { scheduler: true }).catch(() => {});
    await eventually(
      () => workers.every((w) => w.profiler.current !== null),
      10_000,
      "the workers profile",
    );
    await eventually(() => cluster.scheduler.clientProfiles.size === 1, 10_000, "recorded");
    expect(cluster.scheduler.profiler.current).not.toBeNull();
    killOutright(dying);
    // Left, they profiled on for maxMs (ten minutes by default), refusing every other profile.
    await eventually(
      () => workers.every((w) => w.profiler.current === null),
      10_000,
      "the workers' profiles discarded",
    );
    expect(cluster.scheduler.profiler.current).toBeNull();
    expect(cluster.scheduler.clientProfiles.size).toBe(0);
    const p = await client.profile(() => 7, { scheduler: true });
    expect(p.value).toBe(7);
    expect(p.failedWorkers).toEqual([]);
    // Stopped and fetched: forgotten by the scheduler as by the workers.
    await eventually(() => cluster.scheduler.clientProfiles.size === 0, 10_000, "forgotten");
  });
});

describe("ClientProfiles", () => {
  it("gives the profiles a client left on the workers, and forgets those ended", () => {
    const profiles = new ClientProfiles();
    expect(profiles.started("w1", "p", "c", true)).toBe(true);
    expect(profiles.started("w2", "p", "c", true)).toBe(true);
    expect(profiles.started("w1", "q", "c", true)).toBe(true);
    profiles.ended("w1", "q");
    // Another client cannot claim a profile id that is not its own.
    expect(profiles.started("w3", "p", "other", true)).toBe(true);
    expect(profiles.clientLeft("other")).toEqual([]);
    expect(profiles.clientLeft("c")).toEqual([
      ["w1", "p"],
      ["w2", "p"],
    ]);
    expect(profiles.size).toBe(0);
  });

  it("refuses a profile of a client no longer connected: the caller discards it", () => {
    const profiles = new ClientProfiles();
    expect(profiles.started("w1", "p", "gone", false)).toBe(false);
    expect(profiles.size).toBe(0);
  });
});
