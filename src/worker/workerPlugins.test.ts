import { describe, expect, it } from "vitest";
import { CloseBudget } from "../util/closeBudget.ts";
import type { WorkerPlugin } from "./state/dataStore.ts";
import { WorkerPlugins, workerPluginProblem } from "./workerPlugins.ts";

function recorder(
  label: string,
  log: string[],
  o: { failSetup?: boolean; failTeardown?: boolean } = {},
) {
  return {
    async setup(w: string) {
      await Promise.resolve();
      log.push(`${label} setup ${w}`);
      if (o.failSetup === true) throw new Error(`${label} cannot`);
    },
    teardown(w: string) {
      log.push(`${label} teardown ${w}`);
      if (o.failTeardown === true) throw new Error(`${label} will not`);
    },
  };
}

/** For the plugins whose replaced teardown is not to throw. */
function unexpected(name: string, err: unknown): never {
  throw new Error(`the teardown of ${name} failed unexpectedly`, { cause: err });
}

describe("WorkerPlugins", () => {
  it("adds (set up, kept in the state machine's map), replaces (old torn down first) and removes", async () => {
    const installed = new Map<string, WorkerPlugin>();
    const log: string[] = [];
    const plugins = new WorkerPlugins(installed, "w", unexpected);
    await plugins.add("p", recorder("one", log));
    await plugins.add("q", recorder("two", log));
    await plugins.add("p", recorder("three", log));
    expect(log).toEqual(["one setup w", "two setup w", "one teardown w", "three setup w"]);
    expect(plugins.names).toEqual(["q", "p"]);
    expect([...installed.keys()]).toEqual(["q", "p"]);
    expect(await plugins.remove("q")).toBe(true);
    expect(await plugins.remove("q")).toBe(false);
    expect(log.at(-1)).toBe("two teardown w");
    expect(plugins.names).toEqual(["p"]);
  });

  it("a plugin whose setup throws is not kept; the error is rethrown", async () => {
    const installed = new Map<string, WorkerPlugin>();
    const log: string[] = [];
    const plugins = new WorkerPlugins(installed, "w", unexpected);
    await expect(plugins.add("p", recorder("bad", log, { failSetup: true }))).rejects.toThrow(
      "bad cannot",
    );
    expect(installed.size).toBe(0);
    expect(log).toEqual(["bad setup w"]);
  });

  it("replacing a plugin whose teardown throws tells of it, and sets the new one up", async () => {
    // Dask's plugin_add removes the old plugin, its teardown's error returned and
    // ignored, then sets the new one up: the error is not the new plugin's.
    const installed = new Map<string, WorkerPlugin>();
    const log: string[] = [];
    const failed: string[] = [];
    const plugins = new WorkerPlugins(installed, "w", (name, err) =>
      failed.push(`${name}: ${(err as Error).message}`),
    );
    await plugins.add("p", recorder("old", log, { failTeardown: true }));
    await plugins.add("p", recorder("new", log));
    expect(log).toEqual(["old setup w", "old teardown w", "new setup w"]);
    expect(failed).toEqual(["p: old will not"]);
    expect([...installed.keys()]).toEqual(["p"]);
  });

  it("adds and removes run one at a time, in the order asked", async () => {
    const log: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await Promise.all([
      plugins.add("p", recorder("a", log)),
      plugins.remove("p"),
      plugins.add("p", recorder("b", log)),
    ]);
    expect(log).toEqual(["a setup w", "a teardown w", "b setup w"]);
  });

  it("a plugin's setup or teardown that adds or removes a plugin and awaits it has it done at once, not waiting for itself", async () => {
    // Dask's plugin_add takes no lock: a setup adding another plugin just runs it.
    const log: string[] = [];
    const plugins = new WorkerPlugins<string>(new Map(), "w", unexpected);
    await plugins.add("old", recorder("old", log));
    await plugins.add("bundle", {
      async setup() {
        await plugins.add("part", recorder("part", log));
        log.push(`removed old: ${await plugins.remove("old")}`);
      },
      async teardown() {
        log.push(`removed part: ${await plugins.remove("part")}`);
      },
    });
    expect(log).toEqual(["old setup w", "part setup w", "old teardown w", "removed old: true"]);
    expect(plugins.names).toEqual(["bundle", "part"]);
    expect(await plugins.remove("bundle")).toBe(true);
    expect(log.slice(4)).toEqual(["part teardown w", "removed part: true"]);
    expect(plugins.names).toEqual([]);
  });

  it("an add a plugin's hook leaves for later (a timer) waits its turn behind the adds and removals asked before it", async () => {
    const log: string[] = [];
    const plugins = new WorkerPlugins<string>(new Map(), "w", unexpected);
    let later: Promise<void> | undefined;
    let release = () => {};
    const blocking = new Promise<void>((resolve) => {
      release = resolve;
    });
    await plugins.add("starter", {
      setup() {
        setTimeout(() => {
          later = plugins.add("late", recorder("late", log));
        }, 0);
      },
    });
    const slow = plugins.add("slow", {
      async setup() {
        await blocking;
        log.push("slow setup done");
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(later).toBeDefined();
    release();
    await Promise.all([slow, later]);
    expect(log).toEqual(["slow setup done", "late setup w"]);
  });

  it("removeAll tears every plugin down, telling of those whose teardown throws", async () => {
    const log: string[] = [];
    const failed: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await plugins.add("p", recorder("a", log, { failTeardown: true }));
    await plugins.add("q", recorder("b", log));
    await plugins.removeAll((name, err) => failed.push(`${name}: ${(err as Error).message}`));
    expect(log.slice(2)).toEqual(["a teardown w", "b teardown w"]);
    expect(failed).toEqual(["p: a will not"]);
    expect(plugins.names).toEqual([]);
  });

  it("removeAll tears the others down when telling of a teardown's error throws on it (a logger reading a hostile error)", async () => {
    const log: string[] = [];
    const told: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    const hostile = new Error("hidden");
    Object.defineProperty(hostile, "stack", {
      get() {
        throw new Error("stack getter");
      },
    });
    await plugins.add("p", {
      teardown: () => {
        log.push("p teardown");
        throw hostile;
      },
    });
    await plugins.add("q", recorder("b", log));
    // As pino does, reading the error's stack. Before, the throw ended removeAll: q stayed up.
    await plugins.removeAll((name, err) => told.push(`${name}: ${(err as Error).stack}`));
    expect(log).toEqual(["b setup w", "p teardown", "b teardown w"]);
    expect(told).toEqual(["p: "]);
    expect(plugins.names).toEqual([]);
  });

  it("after removeAll (closing), an add is refused, not set up never to be torn down", async () => {
    const log: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await plugins.add("p", recorder("a", log));
    const closing = plugins.removeAll(() => {});
    // An add whose plugin was made while the worker closed comes after the teardown.
    await expect(plugins.add("q", recorder("late", log))).rejects.toThrow(
      "plugin q not set up: closing, its plugins torn down",
    );
    await closing;
    expect(log).toEqual(["a setup w", "a teardown w"]);
    expect(plugins.names).toEqual([]);
  });

  it("removeAll waits on a teardown that never ends only until its budget's deadline, naming it, and still tears the rest down in order", async () => {
    const log: string[] = [];
    const late: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await plugins.add("p", recorder("a", log));
    await plugins.add("stuck", { teardown: () => new Promise(() => {}) });
    await plugins.add("q", recorder("b", log));
    await plugins.add("r", { teardown: async () => new Promise(() => {}) });
    const budget = new CloseBudget(0.05);
    // Before, removeAll waited for the stuck teardown for good: the worker never closed.
    await plugins.removeAll(unexpected, budget, (name, step) => late.push(`${name} ${step}`));
    budget.clear();
    expect(log.slice(2)).toEqual(["a teardown w", "b teardown w"]);
    expect(late).toEqual(["stuck teardown", "r teardown"]);
    expect(plugins.names).toEqual([]);
  });

  it("removeAll does not wait for good on a setup that never ends: it names it and tears it down too", async () => {
    const log: string[] = [];
    const late: string[] = [];
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await plugins.add("p", recorder("a", log));
    const adding = plugins.add("stuck", {
      setup: () => new Promise(() => {}),
      teardown: () => log.push("stuck teardown"),
    });
    await new Promise((r) => setTimeout(r, 10));
    const budget = new CloseBudget(0.05);
    await plugins.removeAll(unexpected, budget, (name, step) => late.push(`${name} ${step}`));
    budget.clear();
    void adding;
    expect(late).toEqual(["stuck setup"]);
    expect(log).toEqual(["a setup w", "a teardown w", "stuck teardown"]);
    expect(plugins.names).toEqual([]);
  });

  it("refuses what is not a plugin, saying why", async () => {
    const plugins = new WorkerPlugins(new Map(), "w", unexpected);
    await expect(plugins.add("p", null)).rejects.toThrow(
      'worker plugin "p": expected an object with setup, teardown or transition methods, got null',
    );
    expect(workerPluginProblem({})).toBe(
      "it has none of the methods setup, teardown and transition",
    );
    expect(workerPluginProblem({ setup: 1 })).toBe("its setup is not a function (1)");
    expect(workerPluginProblem({ transition() {} })).toBeNull();
  });
});
