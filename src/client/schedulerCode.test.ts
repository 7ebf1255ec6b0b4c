import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { currentScheduler } from "../scheduler/schedulerCode.ts";
import { getTaskFunction } from "../worker/taskRegistry.ts";
import { Client } from "./client.ts";
import { RunError } from "./errors.ts";
import { runOutcome } from "./schedulerCode.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

/** Imported by the scheduler only (not by this file: see the first test). */
const SCHEDULER_TASKS = new URL("./schedulerTestTasks.ts", import.meta.url).href;
const REGISTRY = new URL("../worker/taskRegistry.ts", import.meta.url).href;
type SchedulerTasks = typeof import("./schedulerTestTasks.ts");

const silent = pino({ level: "silent" });
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await closeTestClusters();
});

/** A test cluster whose scheduler (and workers) have the scheduler's test tasks too. */
function clusterWithSchedulerTasks(o: Parameters<typeof testCluster>[0] = {}) {
  return testCluster({ ...o, taskModules: [SCHEDULER_TASKS, CLIENT_TEST_TASKS] });
}

/** A scheduler without workers and a client of it. */
async function bareScheduler(taskModules: string[] = []): Promise<[Scheduler, Client]> {
  const scheduler = await Scheduler.start({
    listen: "inproc://scheduler",
    validate: true,
    logger: silent,
    taskModules,
  });
  cleanups.push(() => scheduler.close());
  const client = await Client.connect(scheduler.address, { logger: silent });
  cleanups.push(() => client.close());
  return [scheduler, client];
}

describe("Client.runOnScheduler", () => {
  it("imports the scheduler's task modules when first needed, and runs the function there", async () => {
    // Nothing in this process defined it yet: the scheduler's import does.
    expect(getTaskFunction("schedulerView")).toBeUndefined();
    const [scheduler, client] = await bareScheduler([SCHEDULER_TASKS]);
    const view = (await client.runOnScheduler("schedulerView", "first")) as {
      tag: string;
      address: string;
      workers: unknown[];
      tasks: Map<string, string>;
    };
    expect(getTaskFunction("schedulerView")).toBeDefined();
    expect(view).toEqual({
      tag: "first",
      address: scheduler.address,
      workers: [],
      tasks: new Map(),
    });
    // Outside code the scheduler runs, there is no current scheduler.
    expect(() => currentScheduler()).toThrow(/not called from code the scheduler runs/);
  });

  it("gives what the function threw as a RunError, and says when it knows no such function", async () => {
    const [scheduler, client] = await bareScheduler([SCHEDULER_TASKS]);
    const err = await client.runOnScheduler("schedulerBoom", "too far").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err).toMatchObject({ worker: scheduler.address, exceptionText: "RangeError: too far" });
    // The function's frames only, as a task's traceback: not the scheduler's
    // code that called it, its request handling or Node's below.
    const frames = (err as RunError).tracebackText.split("\n");
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((f) => f.includes("schedulerTestTasks.ts"))).toBe(true);
    await expect(client.runOnScheduler("noSuchFunction")).rejects.toThrow(
      /UnknownTaskFunctionError: unknown task function "noSuchFunction": no task module the scheduler imported defines it.*give the scheduler its task modules/,
    );
    // A module that cannot be imported is named, with why.
    const dir = await mkdtemp(join(tmpdir(), "weft-scheduler-code-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const broken = join(dir, "broken.mjs");
    await writeFile(broken, 'throw new Error("broken on purpose");\n');
    const [, other] = await bareScheduler([pathToFileURL(broken).href]);
    await expect(other.runOnScheduler("alsoMissing")).rejects.toThrow(
      /could not import file:.*broken\.mjs \(broken on purpose\)/,
    );
    await expect(client.runOnScheduler(42 as never)).rejects.toThrow(
      /runOnScheduler: the function must be a task definition/,
    );
    expect(() => new Scheduler({ taskModules: ["/no/such/tasks.ts"] })).toThrow(
      "Scheduler option taskModules: no such file: /no/such/tasks.ts",
    );
  });

  it("a module that threw as it was imported fails the same way until fixed, then defines its functions", async () => {
    const dir = await mkdtemp(join(tmpdir(), "weft-scheduler-code-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const broken = join(dir, "brokenUntilFixed.mjs");
    const name = `untilFixed-${randomUUID()}`;
    const define = `import { defineTask } from ${JSON.stringify(REGISTRY)};\n`;
    await writeFile(
      broken,
      `${define}defineTask(${JSON.stringify(name)}, () => "broken");\nthrow new Error("broken until fixed");\n`,
    );
    const [, client] = await bareScheduler([pathToFileURL(broken).href]);
    const failure = /could not import file:.*brokenUntilFixed\.mjs \(broken until fixed\)/;
    await expect(client.runOnScheduler(name)).rejects.toThrow(failure);
    // Unchanged: Node.js gives the failure it keeps again.
    await expect(client.runOnScheduler(name)).rejects.toThrow(failure);
    await writeFile(broken, `${define}defineTask(${JSON.stringify(name)}, () => "fixed");\n`);
    expect(await client.runOnScheduler(name)).toBe("fixed");
  });

  it("finds the cluster's task modules (loadTaskModules) and a LocalCluster's", async () => {
    const [, client] = await bareScheduler();
    await client.loadTaskModules(new URL(SCHEDULER_TASKS));
    expect(await client.runOnScheduler("schedulerView", "cluster's")).toMatchObject({
      tag: "cluster's",
    });
    // A LocalCluster gives the scheduler its task modules: the workers' named "0", "1".
    const { cluster, client: local } = await clusterWithSchedulerTasks();
    const f = local.submit(inc, 1);
    await f;
    const view = (await local.runOnScheduler("schedulerView", "local")) as {
      address: string;
      workers: string[];
      tasks: Map<string, string>;
    };
    expect(view.address).toBe(cluster.address);
    expect(view.workers.sort()).toEqual(["0", "1"]);
    expect(view.tasks.get(f.key)).toBe("memory");
  });

  it("a LocalCluster's scheduler has its option scheduler.taskModules besides the cluster's", async () => {
    // (Asked of its options: an earlier test imported the module into this process already.)
    const { cluster } = await testCluster({
      workers: 0,
      scheduler: { taskModules: [SCHEDULER_TASKS] },
    });
    expect(cluster.scheduler.options.taskModules).toEqual([CLIENT_TEST_TASKS, SCHEDULER_TASKS]);
  });

  it("crosses TCP: arguments and result as task values", async () => {
    const { cluster, client } = await clusterWithSchedulerTasks({ protocol: "tcp" });
    const view = (await client.runOnScheduler("schedulerView", "over tcp")) as {
      address: string;
      tasks: Map<string, string>;
    };
    expect(view.address).toBe(cluster.address);
    expect(view.tasks).toBeInstanceOf(Map);
    // A typed array alone travels as its raw bytes, which the scheduler forwards unread
    // where it only passes values on: the function it runs gets the array, not {}.
    expect(
      await client.runOnScheduler("describeBytes", new Float64Array([1.5, 2.5, 3.5])),
    ).toMatchObject({ type: "Float64Array", byteLength: 24, aligned: true });
  });

  it("a result the scheduler cannot send back is a RunError too, saying why", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: silent,
      taskModules: [CLIENT_TEST_TASKS],
      maxMessageBytes: 1024 * 1024,
    });
    cleanups.push(() => scheduler.close());
    const small = await Client.connect(scheduler.address, { logger: silent });
    cleanups.push(() => small.close());
    const err = await small.runOnScheduler("bytes", 3 * 1024 * 1024).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err).toMatchObject({ worker: scheduler.address });
    expect((err as RunError).message).toMatch(/cannot send its answer .*MessageTooLargeError/);
    // The connection goes on.
    expect(await small.runOnScheduler("bytes", 3)).toEqual(Uint8Array.from([0, 1, 2]));
  });
});

describe("runOutcome", () => {
  it("names run-on-scheduler in a malformed answer", () => {
    expect(() => runOutcome("tcp://s:1", { status: "maybe" })).toThrow(
      'malformed answer to run-on-scheduler: {"status":"maybe"}',
    );
  });
});

describe("Client.registerSchedulerPlugin", () => {
  it("makes the plugin on the scheduler, which tells it of transitions, until unregistered", async () => {
    const { cluster, client } = await clusterWithSchedulerTasks();
    const { countingPlugins } = (await import(SCHEDULER_TASKS)) as SchedulerTasks;
    expect(
      await client.registerSchedulerPlugin("transitionCounter", {
        name: "memories",
        args: ["memories", "memory"],
      }),
    ).toEqual(["memories"]);
    expect(cluster.scheduler.plugins.names).toEqual(["memories"]);
    await client.gather([1, 2, 3].map((x) => client.submit(inc, x)));
    const seen = countingPlugins.get("memories");
    expect(seen).toEqual({ count: 3, closed: false });
    // Registered again under that name: the first is closed, the new one counts.
    await client.registerSchedulerPlugin("transitionCounter", {
      name: "memories",
      args: ["memories", "memory"],
    });
    expect(seen?.closed).toBe(true);
    await client.submit(inc, 10);
    expect(countingPlugins.get("memories")).toEqual({ count: 1, closed: false });
    expect(await client.unregisterSchedulerPlugin("memories")).toBe(true);
    expect(countingPlugins.get("memories")?.closed).toBe(true);
    expect(await client.unregisterSchedulerPlugin("memories")).toBe(false);
    expect(cluster.scheduler.plugins.names).toEqual([]);
  });

  it("refuses what makes no plugin, a plugin whose start throws, and bad arguments", async () => {
    const { cluster, client } = await clusterWithSchedulerTasks();
    // notAPlugin (of testTasks.ts) gives 42.
    await expect(client.registerSchedulerPlugin("notAPlugin")).rejects.toThrow(
      /addPlugin: .*an object with hook methods/,
    );
    await expect(
      client.registerSchedulerPlugin("transitionCounter", { args: ["broken", "memory", true] }),
    ).rejects.toThrow(`broken cannot start on ${cluster.address}`);
    await expect(client.registerSchedulerPlugin("schedulerBoom", { args: ["no"] })).rejects.toThrow(
      "no",
    );
    await expect(client.registerSchedulerPlugin("nothingLikeIt")).rejects.toThrow(
      /unknown task function "nothingLikeIt"/,
    );
    expect(cluster.scheduler.plugins.names).toEqual([]);
    await expect(
      client.registerSchedulerPlugin("transitionCounter", { args: [new Map()] }),
    ).rejects.toThrow("registerSchedulerPlugin: args must be JSON data");
    await expect(client.registerSchedulerPlugin(7 as never)).rejects.toThrow(
      /registerSchedulerPlugin: expected a task function/,
    );
    await expect(client.unregisterSchedulerPlugin("")).rejects.toThrow(
      "unregisterSchedulerPlugin: name must be a non-empty string",
    );
  });
});
