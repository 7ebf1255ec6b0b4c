import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../client/testCluster.ts";
import { boom, inc } from "../client/testTasks.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import type { SchedulerPlugin } from "./plugins.ts";
import { Scheduler } from "./scheduler.ts";

afterEach(closeTestClusters);
const dir = mkdtempSync(join(tmpdir(), "weft-preload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const silent = () => pino({ level: "silent" });

/** A plugin logging every hook into `log`. */
function recorder(log: string[], name = "rec"): SchedulerPlugin {
  return {
    name,
    start: async (s) => {
      await Promise.resolve();
      log.push(`start ${s.status}`);
    },
    close: () => log.push("close"),
    transition: (key, start, finish) => log.push(`${key}: ${start}→${finish}`),
    addWorker: (_s, w) => log.push(`+worker ${w}`),
    removeWorker: (_s, w) => log.push(`-worker ${w}`),
    addClient: (_s, c) => log.push(`+client ${c}`),
    removeClient: (_s, c) => log.push(`-client ${c}`),
    logEvent: (topic, msg) => log.push(`event ${topic} ${JSON.stringify(msg)}`),
  };
}

describe("scheduler plugins", () => {
  it("are told of workers, clients, transitions and events, and closed with the scheduler", async () => {
    const log: string[] = [];
    const { cluster, client } = await testCluster({
      workers: 1,
      scheduler: { plugins: [recorder(log)] },
    });
    const worker = cluster.workers[0]?.address as string;
    expect(log[0]).toBe("start init"); // started before the scheduler runs
    expect(log).toContain(`+worker ${worker}`);
    expect(log.some((l) => l.startsWith("+client "))).toBe(true);
    const x = client.submit(inc, 1);
    expect(await x).toBe(2);
    expect(log).toContain(`${x.key}: processing→memory`);
    await client.logEvent("mine", { n: 1 });
    expect(log).toContain(`event mine {"n":1}`);
    expect(cluster.scheduler.plugins.names).toEqual(["rec"]);
    await cluster.close();
    expect(log).toContain(`-worker ${worker}`);
    expect(log.at(-1)).toBe("close");
  });

  it("are told of each graph a client submits (updateGraph) and of each restart (restart), as Dask's update_graph and restart", async () => {
    const log: string[] = [];
    let given: unknown;
    const plugin: SchedulerPlugin = {
      name: "graphs",
      updateGraph: (s, update) => {
        given = update;
        // Before the new tasks' transitions: still released.
        log.push(`graph ${update.tasks.map((k) => s.state.tasks.get(k)?.state).join()}`);
      },
      restart: (s) => log.push(`restart ${s.status}`),
    };
    const broken: SchedulerPlugin = {
      name: "broken",
      updateGraph: () => {
        throw new Error("no graphs please");
      },
      restart: () => Promise.reject(new Error("no restarts please")),
    };
    // What the hooks of one throw or reject with is logged: the others are told, the scheduler goes on.
    const { client } = await testCluster({ workers: 1, scheduler: { plugins: [broken, plugin] } });
    const x = client.submit(inc, 1);
    expect(await x).toBe(2);
    expect(log).toEqual(["graph released"]);
    expect(given).toEqual({
      client: client.id,
      keys: [x.key],
      tasks: [x.key],
      stimulusId: expect.any(String),
    });
    await client.restart();
    expect(log).toEqual(["graph released", "restart running"]);
  });

  it("are told of nothing until their start is over, as Dask's register_scheduler_plugin adds a plugin once started", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const log: string[] = [];
    let started = false;
    await cluster.scheduler.addPlugin({
      name: "slow-start",
      start: async () => {
        // What the scheduler does meanwhile: a client's task run, an event.
        expect(await client.submit(inc, 10)).toBe(11);
        await client.logEvent("meanwhile", 1);
        started = true;
      },
      transition: (key, _start, finish) => log.push(`${started} ${key} ${finish}`),
      updateGraph: () => log.push(`${started} graph`),
      logEvent: (topic) => log.push(`${started} event ${topic}`),
    });
    expect(log).toEqual([]);
    const y = client.submit(inc, 20);
    expect(await y).toBe(21);
    expect(log).toContain(`true ${y.key} memory`);
    expect(log.every((l) => l.startsWith("true "))).toBe(true);
  });

  it("are told the scheduler is about to close (beforeClose) while it still serves, as Dask's before_close", async () => {
    const log: string[] = [];
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({
      logger,
      plugins: [
        {
          name: "broken",
          beforeClose: () => {
            throw new Error("no closing please");
          },
        },
        {
          name: "watcher",
          beforeClose: () => log.push(`before ${s.status} ${s.address !== ""}`),
          close: () => log.push("close"),
        },
      ],
    });
    await s.close();
    expect(log).toEqual(["before closing true", "close"]);
    expect(records.some((r) => r.plugin === "broken" && r.hook === "beforeClose")).toBe(true);
  });

  it("are given an event's typed array as itself over TCP, not what the scheduler forwards unread", async () => {
    const got: unknown[] = [];
    const { client } = await testCluster({
      workers: 1,
      protocol: "tcp",
      scheduler: {
        plugins: [{ name: "events", logEvent: (topic, msg) => topic === "bytes" && got.push(msg) }],
      },
    });
    await client.logEvent("bytes", new Uint16Array([1, 2, 3]));
    expect(got).toEqual([new Uint16Array([1, 2, 3])]);
    // Kept as it came for getEvents, which sends it on.
    expect((await client.getEvents("bytes")).map((e) => e[1])).toEqual([
      new Uint16Array([1, 2, 3]),
    ]);
  });

  it("are told of the workers and clients still connected as the scheduler closes, before their close", async () => {
    const log: string[] = [];
    const { cluster, client } = await testCluster({
      workers: 1,
      scheduler: { plugins: [recorder(log)] },
    });
    const worker = cluster.workers[0]?.address as string;
    expect(await client.submit(inc, 1)).toBe(2);
    const added = log.find((l) => l.startsWith("+client ")) as string;
    await cluster.scheduler.close();
    const tail = log.slice(log.indexOf(`-worker ${worker}`));
    expect(tail).toEqual([`-worker ${worker}`, `-${added.slice(1)}`, "close"]);
  });

  it("addPlugin replaces one of the same name (closed first); removePlugin closes it; hooks that throw are logged", async () => {
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({ logger });
    try {
      const first: string[] = [];
      const second: string[] = [];
      expect(await s.addPlugin(recorder(first))).toBe("rec");
      expect(first).toEqual(["start running"]);
      await s.addPlugin(recorder(second));
      expect(first).toEqual(["start running", "close"]);
      expect(second).toEqual(["start running"]);
      class Broken {
        addClient(): void {
          throw new Error("no clients please");
        }
      }
      expect(await s.addPlugin(new Broken())).toBe("Broken");
      expect(s.plugins.names).toEqual(["rec", "Broken"]);
      s.plugins.notify("addClient", "c1");
      expect(second).toContain("+client c1");
      expect(records.some((r) => r.plugin === "Broken" && r.hook === "addClient")).toBe(true);
      expect(await s.removePlugin("rec")).toBe(true);
      expect(await s.removePlugin("rec")).toBe(false);
      expect(second.at(-1)).toBe("close");
    } finally {
      await s.close();
    }
  });

  it("a plugin's start or close that adds or removes a plugin and awaits it has it done at once, not waiting for itself", async () => {
    // Dask's add_plugin takes no lock: a start adding another plugin just adds it.
    const s = await Scheduler.start({ logger: silent() });
    try {
      const part: string[] = [];
      const log: string[] = [];
      await s.addPlugin({
        name: "bundle",
        start: async (scheduler) => {
          log.push(`added ${await scheduler.addPlugin(recorder(part, "part"))}`);
        },
        close: async () => {
          log.push(`removed part: ${await s.removePlugin("part")}`);
        },
      });
      expect(log).toEqual(["added part"]);
      expect(part).toEqual(["start running"]);
      expect(s.plugins.names).toEqual(["bundle", "part"]);
      expect(await s.removePlugin("bundle")).toBe(true);
      expect(log).toEqual(["added part", "removed part: true"]);
      expect(part).toEqual(["start running", "close"]);
      expect(s.plugins.names).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("async hooks that reject are logged as a throw is, the scheduler going on", async () => {
    const { logger, records } = memoryLogger();
    const failing = () => Promise.reject(new RangeError("async hook failed"));
    const plugin: SchedulerPlugin = {
      name: "async",
      transition: failing,
      addWorker: failing,
      addClient: failing,
      removeClient: failing,
      logEvent: failing,
    };
    // Before, each rejection was unhandled: the process ended.
    const { client } = await testCluster({ workers: 1, logger, scheduler: { plugins: [plugin] } });
    expect(await client.submit(inc, 1)).toBe(2);
    await client.logEvent("mine", 1);
    const failed = (hook: string) =>
      records.some(
        (r) =>
          r.plugin === "async" &&
          (r.hook ?? "transition") === hook &&
          (r.err as { message?: string } | undefined)?.message === "async hook failed",
      );
    for (let i = 0; i < 100 && !failed("logEvent"); i++) await new Promise((r) => setTimeout(r, 5));
    for (const hook of ["transition", "addWorker", "addClient", "logEvent"]) {
      expect(failed(hook), hook).toBe(true);
    }
  });

  it("hooks throwing or rejecting with a value that cannot be read are logged, the scheduler going on", async () => {
    const { logger, records } = memoryLogger();
    const hostile = () =>
      new Proxy(
        {},
        {
          get() {
            throw new Error("proxy trap");
          },
        },
      );
    const plugin: SchedulerPlugin = {
      name: "hostile",
      addClient: () => {
        throw hostile();
      },
      logEvent: () => Promise.reject(hostile()),
    };
    // Before, logging it threw: from the client's session (an unhandled rejection), or
    // from the rejection's handler (another).
    const { client } = await testCluster({ workers: 1, logger, scheduler: { plugins: [plugin] } });
    expect(await client.submit(inc, 1)).toBe(2);
    await client.logEvent("mine", 1);
    const failed = (hook: string) =>
      records.some(
        (r) =>
          r.plugin === "hostile" &&
          r.hook === hook &&
          /cannot be read \(Error: proxy trap\)/.test(
            (r.err as { message?: string } | undefined)?.message ?? "",
          ),
      );
    for (let i = 0; i < 100 && !failed("logEvent"); i++) await new Promise((r) => setTimeout(r, 5));
    expect(failed("addClient")).toBe(true);
    expect(failed("logEvent")).toBe(true);
  }, 10_000);

  it("a close rejecting with a value that cannot be read is logged; the scheduler still closes", async () => {
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({ logger });
    await s.addPlugin({
      name: "hostile",
      close: () =>
        Promise.reject(
          new Proxy(
            {},
            {
              get() {
                throw new Error("proxy trap");
              },
            },
          ),
        ),
    });
    const hidden = new Error("hidden");
    Object.defineProperty(hidden, "stack", {
      get() {
        throw new Error("stack getter");
      },
    });
    const closed: string[] = [];
    await s.addPlugin({ name: "hiddenStack", close: () => Promise.reject(hidden) });
    await s.addPlugin({ name: "last", close: () => void closed.push("last") });
    // Before, making it an Error to log (String() of it) threw, and pino reading the stack
    // getter threw: close() rejected, half done, the plugins after them not closed.
    await expect(s.close()).resolves.toBeUndefined();
    expect(closed).toEqual(["last"]);
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: "scheduler plugin failed to close",
        plugin: "hiddenStack",
        err: expect.objectContaining({ message: "hidden" }),
      }),
    );
    expect(s.status).toBe("closed");
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: "scheduler plugin failed to close",
        plugin: "hostile",
        err: expect.objectContaining({
          message: "an error whose fields cannot be read (Error: proxy trap)",
        }),
      }),
    );
  });

  it("close(timeout) waits on a plugin's close, a start in progress and a preload's weftTeardown that never end up to the timeout, naming each at warn", async () => {
    const preload = join(dir, "stuckTeardown.mjs");
    writeFileSync(preload, "export function weftTeardown() { return new Promise(() => {}); }\n");
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({ logger, preload: [preload] });
    const closed: string[] = [];
    await s.addPlugin({ name: "stuck", close: () => new Promise(() => {}) });
    await s.addPlugin({ name: "after", close: () => void closed.push("after") });
    void s.addPlugin({
      name: "starting",
      start: () => new Promise(() => {}),
      close: () => void closed.push("starting"),
    });
    await new Promise((r) => setTimeout(r, 20)); // its start begun
    const t0 = Date.now();
    // Before, close() never resolved: LocalCluster.close and weft scheduler's SIGTERM hung too.
    await s.close(0.2);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(s.status).toBe("closed");
    expect(closed).toEqual(["after", "starting"]);
    const warned = records
      .filter((r) => r.level === 40)
      .map((r) => `${String(r.plugin ?? r.preload)}: ${String(r.msg)}`);
    expect(warned).toEqual([
      "starting: scheduler plugin start did not finish within the close's timeout (0.2 s): no longer waited on",
      "stuck: scheduler plugin close did not finish within the close's timeout (0.2 s): no longer waited on",
      `${pathToFileURL(preload).href}: a preload module's weftTeardown did not finish within the close's timeout: no longer waited on`,
    ]);
  });

  it("an add arriving once the scheduler closes (its factory was awaited) is refused, not started", async () => {
    const s = await Scheduler.start({ logger: silent() });
    const log: string[] = [];
    await s.addPlugin(recorder(log, "early"));
    await s.close();
    await expect(s.addPlugin(recorder(log, "late"))).rejects.toThrow(
      "addPlugin: late not started: the scheduler is closing",
    );
    expect(log).toEqual(["start running", "close"]);
    expect(s.plugins.names).toEqual([]);
    expect([...s.state.plugins.keys()]).toEqual([]);
  });

  it("a plugin without a name, or not a plugin, is refused; one whose start throws is not kept", async () => {
    const s = await Scheduler.start({ logger: silent() });
    try {
      await expect(s.addPlugin({})).rejects.toThrow(/needs a name/);
      await expect(s.addPlugin(42 as unknown as SchedulerPlugin, "n")).rejects.toThrow(
        /addPlugin: expected an object with hook methods/,
      );
      await expect(
        s.addPlugin({ name: "p", addWorker: "no" } as unknown as SchedulerPlugin),
      ).rejects.toThrow("addPlugin: its addWorker is not a function");
      await expect(
        s.addPlugin({
          name: "p",
          start: () => {
            throw new Error("cannot start");
          },
        }),
      ).rejects.toThrow("cannot start");
      expect(s.plugins.names).toEqual([]);
      expect(s.state.plugins.size).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("a plugin option whose start throws keeps the scheduler from starting, and frees its address", async () => {
    const s = new Scheduler({
      listen: "tcp://127.0.0.1:0",
      logger: silent(),
      plugins: [
        {
          name: "p",
          start: () => {
            throw new Error("cannot start");
          },
        },
      ],
    });
    await expect(s.listen()).rejects.toThrow("cannot start");
    expect(() => s.address).toThrow(/not listening/);
  });

  it("preload modules: weftSetup(scheduler) as it starts, weftTeardown(scheduler) as it closes", async () => {
    const mod = join(dir, "preload.mjs");
    writeFileSync(
      mod,
      `export const log = [];
export async function weftSetup(s) {
  log.push("setup " + s.status);
  await s.addPlugin({ name: "from-preload", close: () => log.push("plugin closed") });
}
export function weftTeardown(s) { log.push("teardown " + s.status); }
`,
    );
    const s = await Scheduler.start({ logger: silent(), preload: [mod] });
    const { log } = (await import(pathToFileURL(mod).href)) as { log: string[] };
    expect(log).toEqual(["setup init"]);
    expect(s.plugins.names).toEqual(["from-preload"]);
    await s.close();
    expect(log).toEqual(["setup init", "plugin closed", "teardown closing"]);
  });

  it("closed while it starts: listen() rejects, and what it started is stopped, the teardown run once", async () => {
    const mod = join(dir, "slow-preload.mjs");
    writeFileSync(
      mod,
      `export const log = [];
export async function weftSetup() { log.push("setup"); await new Promise((r) => setTimeout(r, 100)); }
export function weftTeardown() { log.push("teardown"); }
`,
    );
    const s = new Scheduler({ logger: silent(), listen: "tcp://127.0.0.1:0", preload: [mod] });
    const listening = s.listen();
    const { log } = (await import(pathToFileURL(mod).href)) as { log: string[] };
    while (log.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = s.close();
    await expect(listening).rejects.toThrow("the scheduler was closed while starting");
    await closing;
    expect(s.status).toBe("closed");
    expect(() => s.address).toThrow(/not listening/);
    expect(log).toEqual(["setup", "teardown"]);
    // Closed before its first await is over (the socket's listen).
    const early = new Scheduler({ logger: silent(), listen: "tcp://127.0.0.1:0" });
    const started = early.listen();
    await early.close();
    await expect(started).rejects.toThrow("the scheduler was closed while starting");
    expect(early.status).toBe("closed");
    expect(() => early.address).toThrow(/not listening/);
  });

  it("a preload that is missing, does not import, or whose weftSetup throws: a clear error", async () => {
    expect(() => new Scheduler({ preload: [join(dir, "nope.mjs")] })).toThrow(
      /Scheduler option preload: no such file: .*nope\.mjs/,
    );
    const throws = join(dir, "throws.mjs");
    writeFileSync(throws, "export function weftSetup() { throw new Error('setup failed'); }\n");
    const s = new Scheduler({ logger: silent(), preload: [throws] });
    await expect(s.listen()).rejects.toThrow(/^preload file:.*throws\.mjs: setup failed$/);
    const notFn = join(dir, "notfn.mjs");
    writeFileSync(notFn, "export const weftSetup = 42;\n");
    await expect(new Scheduler({ logger: silent(), preload: [notFn] }).listen()).rejects.toThrow(
      /notfn\.mjs: its weftSetup export is not a function/,
    );
  });

  it("transition hooks see erred tasks too (the state machine calls them)", async () => {
    const log: string[] = [];
    const { client } = await testCluster({ workers: 1, scheduler: { plugins: [recorder(log)] } });
    const f = client.submit(boom, "bad");
    await expect(f.result()).rejects.toThrow();
    expect(log).toContain(`${f.key}: processing→erred`);
  });
});
