import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { Worker } from "../worker/worker.ts";
import { SchedulerReplyError, WorkerPluginError } from "./errors.ts";
import {
  beforeRequest,
  closeTestClusters,
  eventually,
  extraWorker,
  testCluster,
} from "./testCluster.ts";
import { heldJoiningWorker } from "./testHeldJoiningWorker.ts";
import {
  failingPlugin,
  gatedPlugin,
  inc,
  notAPlugin,
  PLUGIN_GATE,
  PLUGIN_LOG,
  pickyPlugin,
  recordingPlugin,
  throwingTransitionPlugin,
} from "./testTasks.ts";
import {
  addOnEach,
  removeOnEach,
  unregisterPlugin,
  WORKER_PLUGIN_RPCS,
  workerPluginSpec,
} from "./workerPlugins.ts";

beforeEach(() => {
  PLUGIN_LOG.length = 0;
});
afterEach(closeTestClusters);

describe("worker plugins: registerWorkerPlugin, unregisterWorkerPlugin", () => {
  it("run on every worker and those joining later, see transitions, and are torn down", async () => {
    const { cluster, client } = await testCluster();
    const [a, b] = cluster.workers.map((w) => w.address).sort() as [string, string];
    expect(await client.registerWorkerPlugin(recordingPlugin, { args: ["rec"] })).toEqual({
      [a]: "OK",
      [b]: "OK",
    });
    expect(PLUGIN_LOG.sort()).toEqual([`rec setup ${a}`, `rec setup ${b}`]);
    PLUGIN_LOG.length = 0;

    const x = client.submitWith({ workers: a }, inc, 1);
    expect(await x).toBe(2);
    expect(PLUGIN_LOG).toEqual([`rec ${x.key} memory`]);

    // A worker joining later sets it up as it registers.
    PLUGIN_LOG.length = 0;
    const late = await extraWorker(cluster);
    try {
      expect(PLUGIN_LOG).toEqual([`rec setup ${late.address}`]);
      PLUGIN_LOG.length = 0;
      const removed = await client.unregisterWorkerPlugin("recordingPlugin");
      expect(removed).toEqual({ [a]: true, [b]: true, [late.address]: true });
      // By address, as the other answers by worker are.
      expect(Object.keys(removed)).toEqual([a, b, late.address].sort());
      expect(PLUGIN_LOG.sort()).toEqual(
        [`rec teardown ${a}`, `rec teardown ${b}`, `rec teardown ${late.address}`].sort(),
      );
      const refused = await client.unregisterWorkerPlugin("recordingPlugin").catch((e) => e);
      expect(refused).toBeInstanceOf(SchedulerReplyError);
      expect(refused).toMatchObject({
        op: "unregister-worker-plugin",
        method: null,
        message: 'unregister-worker-plugin: no worker plugin named "recordingPlugin"',
      });
    } finally {
      await late.close();
    }
  });

  it("one of the same name replaces the last (torn down first); closing a worker tears its plugins down", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [w] = cluster.workers.map((x) => x.address) as [string];
    await client.registerWorkerPlugin(recordingPlugin, { name: "p", args: ["one"] });
    await client.registerWorkerPlugin("recordingPlugin", { name: "p", args: ["two"] });
    await client.registerWorkerPlugin(recordingPlugin, { name: "q", args: ["three"] });
    expect(PLUGIN_LOG).toEqual([
      `one setup ${w}`,
      `one teardown ${w}`,
      `two setup ${w}`,
      `three setup ${w}`,
    ]);
    PLUGIN_LOG.length = 0;
    await cluster.close();
    expect(PLUGIN_LOG).toEqual([`two teardown ${w}`, `three teardown ${w}`]);
  });

  it("a plugin that cannot be made or set up is refused, naming the worker, and not kept for the workers to come", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [w] = cluster.workers.map((x) => x.address) as [string];
    const failed = await client.registerWorkerPlugin(failingPlugin).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(WorkerPluginError);
    expect(failed).toMatchObject({ worker: w, plugin: "failingPlugin" });
    expect((failed as Error).message).toMatch(/no setup today/);
    await expect(client.registerWorkerPlugin(notAPlugin)).rejects.toThrow(
      /worker plugin "notAPlugin": expected an object with setup, teardown or transition methods, got 42/,
    );
    await expect(client.registerWorkerPlugin("noSuchFactory")).rejects.toThrow(/noSuchFactory/);
    // None of them was recorded: a worker joining now sets nothing up, and logs nothing.
    const late = await extraWorker(cluster);
    try {
      expect(PLUGIN_LOG).toEqual([]);
      await expect(client.unregisterWorkerPlugin("failingPlugin")).rejects.toThrow(
        /no worker plugin named/,
      );
    } finally {
      await late.close();
    }
  });

  it("a replacement refused by a worker leaves neither there, and the one it replaced recorded for the workers to come", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [w] = cluster.workers;
    await client.registerWorkerPlugin(recordingPlugin, { name: "p", args: ["v1"] });
    const failed = await client
      .registerWorkerPlugin(failingPlugin, { name: "p" })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(WorkerPluginError);
    expect(w?.pluginNames).toEqual([]);
    const late = await extraWorker(cluster);
    try {
      expect(late.pluginNames).toEqual(["p"]);
      expect(PLUGIN_LOG).toEqual([
        `v1 setup ${w?.address}`,
        `v1 teardown ${w?.address}`,
        `v1 setup ${late.address}`,
      ]);
    } finally {
      await late.close();
    }
  });

  it("a plugin refused by one worker and set up on others can still be unregistered there", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [a, b] = cluster.workers.map((x) => x.address).sort() as [string, string];
    const [wa] = cluster.workers.filter((x) => x.address === a);
    const failed = await client.registerWorkerPlugin(pickyPlugin, { args: [[a]] }).catch((e) => e);
    expect(failed).toMatchObject({ worker: b, plugin: "pickyPlugin" });
    // Set up on a, not recorded for the workers to come: unregistering still takes it off a.
    expect(wa?.pluginNames).toEqual(["pickyPlugin"]);
    expect(await client.unregisterWorkerPlugin("pickyPlugin")).toEqual({ [a]: true, [b]: false });
    expect(wa?.pluginNames).toEqual([]);
    // Held by no worker and not recorded, it is refused as before.
    await expect(client.unregisterWorkerPlugin("pickyPlugin")).rejects.toThrow(
      'unregister-worker-plugin: no worker plugin named "pickyPlugin"',
    );
  });

  it("what a plugin's transition hook throws is logged by its worker, not raised: the task finishes", async () => {
    const logger = pino({ level: "error" }, { write: () => {} });
    const { client } = await testCluster({ workers: 1, logger });
    await client.registerWorkerPlugin(throwingTransitionPlugin);
    const x = client.submit(inc, 1);
    expect(await x).toBe(2);
    const [records] = Object.values(await client.getWorkerLogs());
    expect(records).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "worker plugin failed",
        err: `ValueError: no transition today (${x.key})`,
        fields: { plugin: "throwingTransitionPlugin" },
      }),
    );
  });

  it("the rejection of an async transition hook is logged by its worker as a throw is: the task finishes", async () => {
    const logger = pino({ level: "error" }, { write: () => {} });
    const { cluster, client } = await testCluster({ workers: 1, logger });
    const worker = cluster.workers[0] as Worker;
    await worker.addPlugin(
      { transition: async (key: string) => Promise.reject(new RangeError(`not today (${key})`)) },
      "asyncTransition",
    );
    // Before, each rejection was unhandled: the worker's process ended.
    const x = client.submit(inc, 1);
    expect(await x).toBe(2);
    await new Promise((r) => setTimeout(r, 10));
    const [records] = Object.values(await client.getWorkerLogs());
    expect(records).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "worker plugin failed",
        err: `RangeError: not today (${x.key})`,
        fields: { plugin: "asyncTransition" },
      }),
    );
  });

  it("a worker joining later that cannot set a recorded plugin up logs why, and runs on", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [w] = cluster.workers.map((x) => x.address) as [string];
    expect(await client.registerWorkerPlugin(pickyPlugin, { args: [[w]] })).toEqual({ [w]: "OK" });
    const { logger, records } = memoryLogger();
    const late = await extraWorker(cluster, { logger });
    try {
      expect(late.status).toBe("running");
      expect(late.pluginNames).toEqual([]);
      expect(records).toContainEqual(
        expect.objectContaining({
          msg: "the cluster's worker plugin failed to set up",
          plugin: "pickyPlugin",
          err: expect.objectContaining({ message: `not on ${late.address}` }),
        }),
      );
      // It runs tasks as any worker does.
      expect(await client.submitWith({ workers: late.address }, inc, 1)).toBe(2);
      expect(PLUGIN_LOG).toEqual([`picky setup ${w}`]);
    } finally {
      await late.close();
    }
  });

  it("a worker that joins as the scheduler records a plugin is asked first: one refusing it keeps it from being recorded", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [w] = cluster.workers.map((x) => x.address) as [string];
    let late: Worker | null = null;
    beforeRequest(client, "register-worker-plugin", async () => {
      late = await extraWorker(cluster);
    });
    try {
      const err = await client
        .registerWorkerPlugin(pickyPlugin, { args: [[w]] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkerPluginError);
      expect(err).toMatchObject({
        worker: (late as Worker | null)?.address,
        plugin: "pickyPlugin",
      });
      expect(cluster.scheduler.workerPlugins).toEqual([]);
    } finally {
      await (late as Worker | null)?.close();
    }
  });

  it("a worker restarted at the same address as the scheduler records a plugin is asked again, and has it", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const first = await extraWorker(cluster);
    const { address } = first;
    let again: Worker | null = null;
    // After the workers were asked, before the record: another process at the address,
    // registered too late to be given the plugin, and never asked (its address was).
    beforeRequest(client, "register-worker-plugin", async () => {
      await first.close();
      await eventually(() => !cluster.scheduler.state.workers.has(address), 5000);
      again = await extraWorker(cluster, { listen: address });
    });
    try {
      const answers = await client.registerWorkerPlugin(recordingPlugin, { args: ["rec"] });
      const restarted = again as Worker | null;
      expect(restarted?.address).toBe(address);
      expect(answers[address]).toBe("OK");
      expect(cluster.workers[0].pluginNames).toHaveLength(1);
      expect(restarted?.pluginNames).toEqual(cluster.workers[0].pluginNames);
    } finally {
      await first.close();
      await (again as Worker | null)?.close();
    }
  });

  it("a worker joining as a plugin is replaced or removed, the record's setups not over, ends with what the client asked last", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.registerWorkerPlugin(gatedPlugin);
    await client.registerWorkerPlugin(recordingPlugin, { name: "x", args: ["v1"] });
    await client.registerWorkerPlugin(recordingPlugin, { name: "y", args: ["y1"] });
    // It registers, and sets the recorded plugins up in turn: the gated one holds it.
    const held = await heldJoiningWorker(cluster);
    const { address: late, joining, release } = held;
    try {
      const replaced = client.registerWorkerPlugin(recordingPlugin, { name: "x", args: ["v2"] });
      const removed = client.unregisterWorkerPlugin("y");
      await eventually(() => PLUGIN_LOG.includes(`v2 setup ${cluster.workers[0].address}`), 5000);
      release();
      expect((await replaced)[late]).toBe("OK");
      expect(await removed).toMatchObject({ [cluster.workers[0].address]: true });
      const worker = await joining;
      expect(worker.pluginNames.sort()).toEqual(["gatedPlugin", "x"]);
      // Of x, v2 last set up there, not the recorded v1 of its register reply; y, if set up
      // there at all, torn down last. The two requests' steps there may interleave either way.
      const there = PLUGIN_LOG.filter((l) => l.endsWith(` ${late}`));
      expect(there.filter((l) => /^v\d /.test(l)).at(-1)).toBe(`v2 setup ${late}`);
      expect([undefined, `y1 teardown ${late}`]).toContain(
        there.filter((l) => l.startsWith("y1 ")).at(-1),
      );
    } finally {
      await held.finish();
    }
  });

  it("a plugin unregistered while its registration still waits on a setup is not recorded for the workers to come", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    let release = () => {};
    PLUGIN_GATE.wait = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      // A registration given up on (a timeout), then undone.
      const registering = client.registerWorkerPlugin(gatedPlugin);
      await eventually(() => cluster.workers[0].pluginNames.includes("gatedPlugin"), 5000);
      const unregistering = client.unregisterWorkerPlugin("gatedPlugin");
      release();
      await Promise.allSettled([registering, unregistering]);
      expect(cluster.workers[0].pluginNames).toEqual([]);
      expect(cluster.scheduler.workerPlugins).toEqual([]);
      const late = await extraWorker(cluster);
      try {
        expect(late.pluginNames).toEqual([]);
      } finally {
        await late.close();
      }
    } finally {
      release();
    }
  });

  it("bad arguments are refused before anything is sent", async () => {
    const { client } = await testCluster({ workers: 1 });
    await expect(client.registerWorkerPlugin(recordingPlugin, { args: [() => 1] })).rejects.toThrow(
      /args must be JSON data/,
    );
    await expect(
      client.registerWorkerPlugin(recordingPlugin, { args: [new Map()] }),
    ).rejects.toThrow(/args must be JSON data/);
    await expect(client.registerWorkerPlugin(recordingPlugin, { name: "" })).rejects.toThrow(
      /name must be a non-empty string/,
    );
    await expect(client.registerWorkerPlugin("")).rejects.toThrow(/expected a task function/);
    await expect(client.unregisterWorkerPlugin("")).rejects.toThrow(/non-empty string/);
    expect(PLUGIN_LOG).toEqual([]);
  });

  it("on a thread pool worker, the plugin is made and runs on its main thread", async () => {
    const { cluster, client } = await testCluster({ workers: 1, executor: "threads" });
    const [w] = cluster.workers.map((x) => x.address) as [string];
    await client.registerWorkerPlugin(recordingPlugin, { args: ["pool"] });
    const x = client.submit(inc, 41);
    expect(await x).toBe(42);
    expect(PLUGIN_LOG).toEqual([`pool setup ${w}`, `pool ${x.key} memory`]);
  }, 30_000);
});

describe("worker preload modules and Worker.addPlugin", () => {
  it("weftSetup(worker) runs before the worker registers, weftTeardown(worker) as it closes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-worker-preload-"));
    try {
      const mod = join(dir, "setup.mjs");
      writeFileSync(
        mod,
        `export const log = [];
export async function weftSetup(w) {
  log.push("setup " + w.status);
  await w.addPlugin({ transition: (key, s, f) => { if (f === "memory") log.push(key + " memory"); } }, "watch");
}
export function weftTeardown(w) { log.push("teardown " + w.pluginNames.length); }
`,
      );
      const { cluster, client } = await testCluster({ workers: 1, worker: { preload: [mod] } });
      const { log } = (await import(pathToFileURL(mod).href)) as { log: string[] };
      expect(log).toEqual(["setup starting"]);
      const x = client.submit(inc, 1);
      expect(await x).toBe(2);
      expect(log).toContain(`${x.key} memory`);
      expect(cluster.workers[0]?.pluginNames).toEqual(["watch"]);
      await cluster.close();
      expect(log.at(-1)).toBe("teardown 0"); // plugins first, then the preloads
      expect(
        () => new Worker({ scheduler: "tcp://127.0.0.1:1", preload: [join(dir, "no.mjs")] }),
      ).toThrow(/Worker option preload: no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Workers whose every rpc answers `answer(method)` (or throws what it throws). */
function peersAnswering(answer: (method: string) => unknown): PeerPool {
  return {
    get: async () => ({ call: async (method: string) => answer(method) }),
  } as unknown as PeerPool;
}

describe("worker plugins, apart from a cluster", () => {
  it("the spec keeps a copy of the args, which must be an array", () => {
    const args = [{ n: 1 }];
    const spec = workerPluginSpec("recordingPlugin", { args });
    args[0].n = 2;
    expect(spec).toEqual({ name: "recordingPlugin", fn: "recordingPlugin", args: [{ n: 1 }] });
    expect(() => workerPluginSpec("recordingPlugin", { args: { n: 1 } as never })).toThrow(
      "registerWorkerPlugin: args must be an array, got",
    );
  });

  it("an answer other than OK, or a removal not saying whether it had the plugin, is an error naming the worker", async () => {
    const spec = workerPluginSpec("recordingPlugin", {});
    const odd = peersAnswering(() => ({ status: "maybe", removed: "yes" }));
    const added = await addOnEach(odd, ["tcp://a:1"], spec, WORKER_PLUGIN_RPCS).catch((e) => e);
    expect(added).toBeInstanceOf(WorkerPluginError);
    expect(added).toMatchObject({ worker: "tcp://a:1", plugin: "recordingPlugin" });
    expect((added as WorkerPluginError).reason).toMatch(/^malformed answer: /);
    const removed = await removeOnEach(odd, ["tcp://a:1"], "p", WORKER_PLUGIN_RPCS).catch((e) => e);
    expect(removed).toBeInstanceOf(WorkerPluginError);
    expect((removed as WorkerPluginError).reason).toMatch(/^teardown: malformed answer: /);
    const fine = peersAnswering(() => ({ removed: false }));
    expect(await removeOnEach(fine, ["tcp://a:1"], "p", WORKER_PLUGIN_RPCS)).toEqual({
      "tcp://a:1": false,
    });
  });

  it("a teardown that threw is an error saying so", async () => {
    const failing = peersAnswering(() => {
      throw new Error("boom");
    });
    const err = await removeOnEach(failing, ["tcp://a:1"], "p", WORKER_PLUGIN_RPCS).catch((e) => e);
    expect(err).toMatchObject({ worker: "tcp://a:1", plugin: "p", reason: "teardown: boom" });
  });

  it("unregistering asks the workers a plugin the scheduler has not recorded, refused only if none had it", async () => {
    const op = "unregister-worker-plugin";
    const unrecorded = () =>
      Promise.reject(
        new SchedulerReplyError(op, 'unregister-worker-plugin: no worker plugin named "p"'),
      );
    const asked: string[] = [];
    const held = async () => {
      asked.push("held");
      return { "tcp://a:1": true, "tcp://b:1": false };
    };
    expect(await unregisterPlugin(op, "worker", "p", unrecorded, held)).toEqual({
      "tcp://a:1": true,
      "tcp://b:1": false,
    });
    const nowhere = async () => ({ "tcp://a:1": false });
    await expect(unregisterPlugin(op, "worker", "p", unrecorded, nowhere)).rejects.toBeInstanceOf(
      SchedulerReplyError,
    );
    // Workers that cannot be asked (no nanny taking plugins): the refusal, not their error.
    const failing = () => Promise.reject(new WorkerPluginError("tcp://a:1", "p", "no nanny"));
    await expect(unregisterPlugin(op, "worker", "p", unrecorded, failing)).rejects.toThrow(
      'no worker plugin named "p"',
    );
    // Any other failure of the scheduler's is the answer: the workers are not asked.
    asked.length = 0;
    const closed = () => Promise.reject(new Error("the client is closed"));
    await expect(unregisterPlugin(op, "worker", "p", closed, held)).rejects.toThrow(
      "the client is closed",
    );
    expect(asked).toEqual([]);
  });
});
