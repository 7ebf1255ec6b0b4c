/**
 * An actor whose worker freezes (SIGSTOP, a VM paused: its connections stay
 * open, nothing answers) and is removed by the scheduler for going silent:
 * calls to it, from the client and from tasks, end instead of waiting for good.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ActorError } from "./actor.ts";
import { RemoteTaskError } from "./errors.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { counter, inc, incrementSlowly } from "./testTasks.ts";
import {
  FROZEN_WORKER_TTL_MS,
  killWorkerProcesses,
  within,
  workerProcessJoining,
} from "./testWorkerProcess.ts";

afterEach(async () => {
  killWorkerProcesses();
  await closeTestClusters();
});

describe("an actor on a worker that froze", () => {
  for (const executor of ["inline", "threads"] as const) {
    it(`calls in flight end, new ones fail at once, a task calling it frees its thread (${executor})`, async () => {
      const { cluster, client } = await testCluster({
        protocol: "tcp",
        workers: 1,
        executor,
        threadsPerWorker: 1,
        scheduler: { workerTtlMs: FROZEN_WORKER_TTL_MS },
      });
      const local = cluster.workers[0].address;
      const { child, address: remote } = await workerProcessJoining(cluster, client);
      const handle = await client.submitWith({ actor: true, workers: remote }, counter);
      expect(handle.address).toBe(remote);
      // In flight as it freezes: from the client, and from a task on the other worker.
      const fromClient = handle.call("slowIncrement", 1, 2_000).catch((e: unknown) => e);
      const fromTask = client.submitWith({ workers: local, pure: false }, incrementSlowly, handle);
      await new Promise((r) => setTimeout(r, 300));
      child.kill("SIGSTOP");
      await eventually(() => cluster.scheduler.state.workers.size === 1, 30_000, "removed");
      expect(await within(fromClient, 10_000)).toEqual({ resolved: expect.any(ActorError) });
      const after = await within(handle.call("increment"), 2_000);
      expect(after).toBeInstanceOf(ActorError);
      expect((after as Error).message).toMatch(
        /the actor is gone: .*Worker holding Actor was lost/,
      );
      expect(await within(fromTask, 10_000)).toBeInstanceOf(RemoteTaskError);
      // The task's run ended: the worker's one thread runs the next task (a thread
      // started afresh, if the run's was ended: seconds on a loaded machine).
      const next = client.submitWith({ workers: local, pure: false }, inc, 1);
      expect(await within(next, 30_000)).toEqual({ resolved: 2 });
    }, 120_000);
  }
});
