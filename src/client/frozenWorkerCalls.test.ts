/**
 * The calls that ask every worker (`run`, the logs, stories and dumps of the
 * workers, task modules, uploads and plugins) on a cluster where a worker froze
 * (its process stopped: its connections open, nothing answering) and was
 * removed for going silent: they end, saying why, instead of waiting for good;
 * those the scheduler keeps for the workers to come leave it out.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLIENT_TEST_TASKS,
  closeTestClusters,
  eventually,
  extraWorker,
  testCluster,
} from "./testCluster.ts";
import { inc, recordingPlugin } from "./testTasks.ts";
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

/** A test cluster (TCP, one worker) and a second worker, a process of its own, about to freeze. */
async function clusterWithAWorkerProcess() {
  const { cluster, client } = await testCluster({
    protocol: "tcp",
    workers: 1,
    scheduler: { workerTtlMs: FROZEN_WORKER_TTL_MS },
  });
  const local = cluster.workers[0].address;
  const { child, address: frozen } = await workerProcessJoining(cluster, client);
  return { cluster, client, local, child, frozen };
}

describe("calls asking every worker, one of which froze", () => {
  it("end once the scheduler removed it, naming it, and the next ones skip it", async () => {
    const { cluster, client, local, child, frozen } = await clusterWithAWorkerProcess();
    child.kill("SIGSTOP");
    const dir = await mkdtemp(join(tmpdir(), "weft-frozen-"));
    try {
      // Each settles within the time given (the removal takes about the TTL).
      const calls = {
        run: within(client.run(inc, 1), 20_000),
        logs: within(client.getWorkerLogs({ n: 1 }), 20_000),
        story: within(client.story("x"), 20_000),
      };
      // A dump writes a worker it cannot read as such.
      const dump = within(client.dumpClusterState(join(dir, "frozen")), 20_000);
      await eventually(() => cluster.scheduler.state.workers.size === 1, 30_000, "removed");
      for (const [name, call] of Object.entries(calls)) {
        const outcome = await call;
        expect(outcome, name).toBeInstanceOf(Error);
        expect((outcome as Error).message, name).toContain(`${frozen} left the cluster`);
      }
      expect(await dump).toEqual({ resolved: join(dir, "frozen.msgpack.gz") });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // The frozen worker is no longer asked.
    expect(await client.run(inc, 1)).toEqual({ [local]: 2 });
    child.kill("SIGCONT");
  }, 120_000);

  it("what the scheduler keeps for the workers to come leaves it out, and a worker joining gets it", async () => {
    const { cluster, client, local, child } = await clusterWithAWorkerProcess();
    const dir = await mkdtemp(join(tmpdir(), "weft-frozen-"));
    const task = `uploaded-${randomUUID()}`;
    const registry = new URL("../worker/taskRegistry.ts", import.meta.url).href;
    const module = join(dir, `${task}.mjs`);
    await writeFile(
      module,
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        `defineTask(${JSON.stringify(task)}, (x) => x * 3);\n`,
    );
    child.kill("SIGSTOP");
    try {
      const calls = {
        modules: within(client.loadTaskModules([CLIENT_TEST_TASKS]), 20_000),
        upload: within(client.uploadFile(module), 20_000),
        plugin: within(client.registerWorkerPlugin(recordingPlugin, { args: ["frozen"] }), 20_000),
      };
      await eventually(() => cluster.scheduler.state.workers.size === 1, 30_000, "removed");
      // Before, each failed ("… left the cluster … while asked") and the scheduler kept
      // nothing: a worker joining later lacked the module its tasks needed.
      for (const [name, call] of Object.entries(calls)) {
        const outcome = (await call) as { resolved?: Record<string, unknown> };
        expect(Object.keys(outcome.resolved ?? { failed: outcome }), name).toEqual([local]);
      }
      const joined = await extraWorker(cluster, { acceptUploads: true });
      try {
        await client.waitForWorkers(2, { timeoutMs: 30_000 });
        const f = client.submitWith({ workers: [joined.address], pure: false }, task, 5);
        expect(await f).toBe(15);
      } finally {
        await joined.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
      child.kill("SIGCONT");
    }
  }, 120_000);

  it("a profile alone (its start cannot reach the worker) ends too", async () => {
    const { cluster, client, child, frozen } = await clusterWithAWorkerProcess();
    child.kill("SIGSTOP");
    const profile = within(
      client.profile(() => new Promise((r) => setTimeout(r, 100))),
      20_000,
    );
    await eventually(() => cluster.scheduler.state.workers.size === 1, 30_000, "removed");
    const outcome = await profile;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toContain(`${frozen} left the cluster`);
    child.kill("SIGCONT");
  }, 120_000);
});
