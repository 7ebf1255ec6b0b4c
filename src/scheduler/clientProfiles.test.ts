import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "../client/client.ts";
import { closeTestClusters, eventually, testCluster } from "../client/testCluster.ts";
import { heldJoiningWorker } from "../client/testHeldJoiningWorker.ts";
import { gatedPlugin } from "../client/testTasks.ts";
import type { CpuProfiler } from "../worker/profiler.ts";
import { ClientProfiles } from "./clientProfiles.ts";
import { Scheduler } from "./scheduler.ts";
import { rawPeer, registerClient, registerWorker } from "./testPeer.ts";

const closers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const c of closers.splice(0).reverse()) await c.close();
  await closeTestClusters();
});

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

describe("the profiles of a client closed while it profiles", () => {
  it("are discarded too: its close does not stop them", async () => {
    const { cluster } = await testCluster({ workers: 2 });
    const closing = await cluster.client();
    const workers = cluster.workers as unknown as Profiled[];
    void closing.profile(() => new Promise(() => {}), {}).catch(() => {});
    await eventually(() => cluster.scheduler.clientProfiles.size === 1, 10_000, "recorded");
    await closing.close();
    await eventually(
      () => workers.every((w) => w.profiler.current === null),
      10_000,
      "the workers' profiles discarded",
    );
    expect(cluster.scheduler.clientProfiles.size).toBe(0);
  });
});

describe("the profile a client started on a worker still taking its register reply", () => {
  it("is discarded with its client: the worker tells the scheduler once its stream starts", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.registerWorkerPlugin(gatedPlugin);
    // It registers, then sets the gated plugin up: listed by the scheduler, no stream to it yet.
    const held = await heldJoiningWorker(cluster);
    const { address: late, joining, release } = held;
    try {
      const dying = await cluster.client();
      let profiling = false;
      void dying
        .profile(
          () => {
            profiling = true;
            return new Promise(() => {});
          },
          { workers: late },
        )
        .catch(() => {});
      await eventually(() => profiling, 10_000, "the joining worker profiles");
      release();
      const worker = (await joining) as unknown as Profiled;
      // Before, its profile-started, sent before the stream existed, was dropped: the
      // profile stayed, refusing every other, until its maxMs (an hour for weft run --profile).
      await eventually(() => cluster.scheduler.clientProfiles.size === 1, 10_000, "recorded");
      killOutright(dying);
      await eventually(() => worker.profiler.current === null, 10_000, "discarded");
    } finally {
      await held.finish();
    }
  });
});

describe("the profile on a worker removed", () => {
  // Cut (a worker killed, its machine gone): no profile-ended comes. Retired: its
  // profile-ended comes after the scheduler stopped reading it.
  it.each(["cut", "retired"])(
    "is forgotten by the scheduler, though its client lives on (%s)",
    async (how) => {
      const { cluster, client } = await testCluster({ workers: 2 });
      const profiling = await cluster.client();
      const gone = cluster.workers[1].address;
      void profiling.profile(() => new Promise(() => {}), { workers: gone }).catch(() => {});
      await eventually(() => cluster.scheduler.clientProfiles.size === 1, 10_000, "recorded");
      if (how === "cut") cluster.scheduler.router.workers.get(gone)?.comm.abort();
      else expect((await client.retireWorkers([gone])).retired).toEqual([gone]);
      await eventually(() => !cluster.scheduler.router.workers.has(gone), 10_000, "removed");
      // Kept, it stayed until its client left: one more for each profile a worker left during.
      expect(cluster.scheduler.clientProfiles.size).toBe(0);
    },
  );
});

describe("the profile on a worker silent past its TTL", () => {
  it("is forgotten as the scheduler removes the worker", async () => {
    const s = await Scheduler.start({
      listen: "inproc://profiles",
      workerTtlMs: 300,
      logger: pino({ level: "silent" }),
    });
    closers.push(s);
    await rawPeer(s.address, registerClient("c1"), (c) => closers.push(c));
    const worker = await rawPeer(s.address, registerWorker("inproc://w/1"), (c) => closers.push(c));
    await worker.comm.send([{ op: "profile-started", id: "p", client: "c1" }]);
    // A client gone: the scheduler asks for its profile's discard at once.
    await worker.comm.send([{ op: "profile-started", id: "q", client: "gone" }]);
    await worker.waitFor((m) => m.op === "profile-discard" && m.id === "q");
    expect(s.clientProfiles.size).toBe(1);
    // It sends no heartbeat: removed after the TTL, its connection cut by the scheduler.
    await eventually(() => s.state.workers.size === 0, 10_000, "removed");
    expect(s.clientProfiles.size).toBe(0);
  });
});

describe("ClientProfiles", () => {
  it("gives the profiles a client left on the workers, and forgets those ended", () => {
    const profiles = new ClientProfiles();
    expect(profiles.started("w1", "p", "c", true)).toBe(true);
    expect(profiles.started("w2", "p", "c", true)).toBe(true);
    expect(profiles.started("w4", "q", "c", true)).toBe(true);
    profiles.ended("w4", "q");
    // Another client cannot claim a profile id that is not its own.
    expect(profiles.started("w3", "p", "other", true)).toBe(true);
    expect(profiles.clientLeft("other")).toEqual([]);
    expect(profiles.clientLeft("c")).toEqual([
      ["w1", "p"],
      ["w2", "p"],
    ]);
    expect(profiles.size).toBe(0);
  });

  it("forgets the profile of a worker that left, keeping the others' of the same profile", () => {
    const profiles = new ClientProfiles();
    profiles.started("w1", "p", "c", true);
    profiles.started("w2", "p", "c", true);
    profiles.started("w3", "q", "d", true);
    profiles.workerLeft("w1");
    profiles.workerLeft("w3");
    expect(profiles.size).toBe(1);
    expect(profiles.clientLeft("d")).toEqual([]);
    expect(profiles.clientLeft("c")).toEqual([["w2", "p"]]);
    expect(profiles.workerCount).toBe(0);
  });

  it("keeps one profile a worker: its next one ends the earlier (a flood grows nothing)", () => {
    const profiles = new ClientProfiles();
    profiles.started("w2", "p0", "c", true);
    for (let i = 0; i < 1000; i++) profiles.started("w1", `p${i}`, "c", true);
    expect(profiles.size).toBe(2);
    expect(profiles.workerCount).toBe(2);
    expect(profiles.clientLeft("c")).toEqual([
      ["w2", "p0"],
      ["w1", "p999"],
    ]);
  });

  it("refuses a profile of a client no longer connected: the caller discards it", () => {
    const profiles = new ClientProfiles();
    expect(profiles.started("w1", "p", "gone", false)).toBe(false);
    expect(profiles.size).toBe(0);
  });
});
