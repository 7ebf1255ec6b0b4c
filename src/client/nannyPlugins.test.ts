import { afterEach, describe, expect, it } from "vitest";
import type { NannyPluginSpec } from "../protocol/messagesSession.ts";
import { BUILT_IN_NANNY_PLUGINS, environ } from "../worker/environ.ts";
import type { NannyLink } from "../worker/nannyLink.ts";
import { type Nanny, NannyPlugins } from "../worker/nannyPlugins.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { NannyPluginError, SchedulerReplyError, WorkerPluginError } from "./errors.ts";
import { nannyPluginSpec } from "./nannyPlugins.ts";
import { closeTestClusters, extraWorker, testCluster } from "./testCluster.ts";
import { recordingPlugin } from "./testTasks.ts";

afterEach(closeTestClusters);

/** A nanny in this process (built-in factories only), and a worker's link to it. */
function inProcessNanny(): {
  nanny: Nanny;
  link: NannyLink;
  asked: NannyPluginSpec[];
  modules: (readonly string[])[];
} {
  const nanny: Nanny = { env: {}, workerAddress: null };
  const plugins = new NannyPlugins(
    nanny,
    (fn) => {
      const f = BUILT_IN_NANNY_PLUGINS.get(fn);
      if (f === undefined) throw new Error(`the nanny has no task function ${JSON.stringify(fn)}`);
      return f;
    },
    (name, err) => {
      throw new Error(`the teardown of ${name} failed unexpectedly`, { cause: err });
    },
  );
  const asked: NannyPluginSpec[] = [];
  const modules: (readonly string[])[] = [];
  const link: NannyLink = {
    async addPlugin(spec, _worker, loaded = []) {
      asked.push(spec);
      modules.push([...loaded]);
      return { restart: (await plugins.add(spec, loaded)).restart };
    },
    removePlugin: (name) => plugins.remove(name),
  };
  return { nanny, link, asked, modules };
}

const LOADED_TASKS = new URL("./testResultMessageLimitTasks.ts", import.meta.url).href;

describe("nanny plugins: registerNannyPlugin, unregisterNannyPlugin", () => {
  it("are handed over with the task modules loaded into the cluster, for the nanny to make them with", async () => {
    const { cluster, client } = await testCluster({ workers: 0 });
    const first = inProcessNanny();
    await extraWorker(cluster, { listen: "inproc://told", nanny: true, nannyLink: first.link });
    await client.loadTaskModules([LOADED_TASKS]);
    await client.registerNannyPlugin(environ, { args: [{ A: "1" }], restart: false });
    expect(first.modules).toEqual([[LOADED_TASKS]]);
    // A worker that comes later imports them from its register reply, then hands the plugin over.
    const later = inProcessNanny();
    await extraWorker(cluster, { listen: "inproc://later", nanny: true, nannyLink: later.link });
    expect(later.modules).toEqual([[LOADED_TASKS]]);
  });

  it("go to the nannies of the workers that have one, restart them as asked, and are forgotten when unregistered", async () => {
    const { cluster, client } = await testCluster({ workers: 0 });
    const plain = await extraWorker(cluster, { listen: "inproc://plain" });
    const { nanny, link, asked } = inProcessNanny();
    const watched = await extraWorker(cluster, {
      listen: "inproc://watched",
      nanny: true,
      nannyLink: link,
    });
    try {
      // Workers without a nanny are skipped.
      expect(await client.registerNannyPlugin(environ, { args: [{ FOO: "1" }] })).toEqual({
        [watched.address]: "OK",
      });
      expect(nanny.env).toEqual({ FOO: "1" });
      // environ restarts the worker, once the client has its answer.
      await watched.closed;
      expect(watched.restartRequested).toBe(true);
      expect(watched.fault).toBeNull();
      expect(plain.restartRequested).toBe(false);

      // The nanny's next worker is handed the recorded plugin as it registers: the
      // nanny has it already, and does not restart it again.
      const next = await extraWorker(cluster, {
        listen: "inproc://watched",
        nanny: true,
        nannyLink: link,
      });
      try {
        expect(asked.map((s) => s.name)).toEqual(["weft.environ", "weft.environ"]);
        expect(next.restartRequested).toBe(false);
        // Registered again as it was: there already, no restart either.
        expect(await client.registerNannyPlugin(environ, { args: [{ FOO: "1" }] })).toEqual({
          [next.address]: "OK",
        });
        await new Promise((r) => setTimeout(r, 50));
        expect(next.restartRequested).toBe(false);
        expect(asked).toHaveLength(3);

        // A worker with a nanny that takes no plugins starts all the same, saying so.
        const { logger, records } = memoryLogger();
        const unlinked = await extraWorker(cluster, {
          listen: "inproc://unlinked",
          nanny: true,
          logger,
        });
        await unlinked.close();
        expect(unlinked.restartRequested).toBe(false);
        expect(records).toContainEqual(
          expect.objectContaining({
            nannyPlugins: ["weft.environ"],
            msg: "the cluster has nanny plugins, which this worker has no nanny to hand to (only weft worker --nanny runs them)",
          }),
        );

        expect(await client.unregisterNannyPlugin("weft.environ")).toEqual({
          [next.address]: true,
        });
        expect(nanny.env).toEqual({});
        await expect(client.unregisterNannyPlugin("weft.environ")).rejects.toThrow(
          'unregister-nanny-plugin: no nanny plugin named "weft.environ"',
        );
      } finally {
        await next.close();
      }
    } finally {
      await plain.close();
      await watched.close();
    }
  });

  it("a nanny that cannot make the plugin, or a worker whose nanny takes none, is an error naming both; nothing is recorded", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const [local] = cluster.workers.map((w) => w.address) as [string];
    // A LocalCluster is its workers' nanny, but in the client's process: it takes no plugins.
    const refused = await client
      .registerNannyPlugin(environ, { args: [{ FOO: "1" }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NannyPluginError);
    expect(refused).toBeInstanceOf(WorkerPluginError);
    expect(refused).toMatchObject({ worker: local, plugin: "weft.environ" });
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^nanny plugin "weft.environ" of the worker at ${local}: .*this worker has no nanny that takes nanny plugins`,
      ),
    );
    await cluster.scale(0);
    const { link } = inProcessNanny();
    const watched = await extraWorker(cluster, { nanny: true, nannyLink: link });
    try {
      const unknown = await client.registerNannyPlugin("noSuchFactory").catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(NannyPluginError);
      expect(unknown).toMatchObject({ worker: watched.address, plugin: "noSuchFactory" });
      expect((unknown as Error).message).toMatch(
        /its nanny: the nanny has no task function "noSuchFactory"/,
      );
      // Not recorded: there is none to unregister.
      const none = await client.unregisterNannyPlugin("noSuchFactory").catch((e: unknown) => e);
      expect(none).toBeInstanceOf(SchedulerReplyError);
    } finally {
      await watched.close();
    }
  });

  it("bad arguments are refused before anything is sent", async () => {
    const { client } = await testCluster({ workers: 1 });
    await expect(client.registerNannyPlugin(recordingPlugin, { args: [() => 1] })).rejects.toThrow(
      "registerNannyPlugin: args must be JSON data",
    );
    await expect(client.registerNannyPlugin(recordingPlugin, { name: "" })).rejects.toThrow(
      "registerNannyPlugin: name must be a non-empty string",
    );
    await expect(
      client.registerNannyPlugin(recordingPlugin, { restart: "yes" as never }),
    ).rejects.toThrow('registerNannyPlugin: restart must be true or false, got "yes"');
    await expect(client.registerNannyPlugin(42 as never)).rejects.toThrow(
      "registerNannyPlugin: expected a task function",
    );
    await expect(client.registerNannyPlugin(environ, { args: [{ FOO: 1 }] })).rejects.toThrow(
      "registerNannyPlugin: the value of FOO must be a string without NUL characters, got 1",
    );
    await expect(client.registerNannyPlugin(environ)).rejects.toThrow(
      "registerNannyPlugin: environ takes one argument, the variables, got 0",
    );
    await expect(client.unregisterNannyPlugin("")).rejects.toThrow(
      "unregisterNannyPlugin: name must be a non-empty string",
    );
    // Nothing reached the scheduler.
    const none = await client.unregisterNannyPlugin(recordingPlugin.name).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(SchedulerReplyError);
  });
});

describe("nannyPluginSpec", () => {
  it("carries the restart asked for, and none where the plugin's own is to be used", () => {
    const args = [{ A: "1" }];
    expect(nannyPluginSpec(environ, { args, restart: false })).toEqual({
      name: "weft.environ",
      fn: "weft.environ",
      args,
      restart: false,
    });
    expect(nannyPluginSpec(environ, { args })).not.toHaveProperty("restart");
  });
});
