import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { NannyPluginSpec } from "../protocol/messagesSession.ts";
import { CloseBudget } from "../util/closeBudget.ts";
import { BUILT_IN_NANNY_PLUGINS, environ } from "./environ.ts";
import { type IpcEnd, ipcNannyLink, serveNannyLink } from "./nannyLink.ts";
import { type Nanny, type NannyPluginHooks, NannyPlugins } from "./nannyPlugins.ts";

const NANNY_PLUGINS = new URL("./nannyPlugins.ts", import.meta.url).href;
const CLOSE_BUDGET = new URL("../util/closeBudget.ts", import.meta.url).href;

/**
 * A nanny whose plugins are made by `factories`, by name, logging their hooks;
 * `setupTimeoutMs` as the nanny's, if given.
 */
function nannyWith(
  factories: Record<string, (...args: readonly unknown[]) => unknown>,
  setupTimeoutMs?: number,
) {
  const nanny: Nanny = { env: {}, workerAddress: "tcp://w:1" };
  const teardownsFailed: string[] = [];
  const plugins = new NannyPlugins(
    nanny,
    (fn) => {
      const f = factories[fn] ?? BUILT_IN_NANNY_PLUGINS.get(fn);
      if (f === undefined) throw new Error(`no task function ${fn}`);
      return f;
    },
    (name, err) => teardownsFailed.push(`${name}: ${(err as Error).message}`),
    setupTimeoutMs,
  );
  return { nanny, plugins, teardownsFailed };
}

const log: string[] = [];
const logging = (label: string, restart?: boolean): NannyPluginHooks => ({
  ...(restart !== undefined ? { restart } : {}),
  setup: (n) => void log.push(`${label} setup ${n.workerAddress}`),
  teardown: () => void log.push(`${label} teardown`),
});

function spec(name: string, fn: string, args: unknown[], restart?: boolean): NannyPluginSpec {
  return { name, fn, args, ...(restart !== undefined ? { restart } : {}) };
}

describe("NannyPlugins", () => {
  it("sets a plugin up once: given again as it was, it is there already (no setup, no restart)", async () => {
    log.length = 0;
    const { plugins } = nannyWith({ make: (label) => logging(String(label), true) });
    expect(await plugins.add(spec("p", "make", ["one"]))).toEqual({ setUp: true, restart: true });
    // A new worker process hands the same plugin over again.
    expect(await plugins.add(spec("p", "make", ["one"]))).toEqual({ setUp: false, restart: false });
    expect(log).toEqual(["one setup tcp://w:1"]);
    expect(plugins.names).toEqual(["p"]);
  });

  it("given otherwise under its name, replaces it: the old one torn down, the new one set up", async () => {
    log.length = 0;
    const { plugins } = nannyWith({ make: (label) => logging(String(label)) });
    await plugins.add(spec("p", "make", ["one"]));
    expect(await plugins.add(spec("p", "make", ["two"]))).toEqual({ setUp: true, restart: false });
    // Only `restart` differs: another plugin too.
    expect(await plugins.add(spec("p", "make", ["two"], true))).toEqual({
      setUp: true,
      restart: true,
    });
    await plugins.add(spec("q", "make", ["three"]));
    expect(log).toEqual([
      "one setup tcp://w:1",
      "one teardown",
      "two setup tcp://w:1",
      "two teardown",
      "two setup tcp://w:1",
      "three setup tcp://w:1",
    ]);
    log.length = 0;
    expect(await plugins.remove("p")).toBe(true);
    expect(await plugins.remove("p")).toBe(false);
    await plugins.removeAll(() => {});
    expect(log).toEqual(["two teardown", "three teardown"]);
    expect(plugins.names).toEqual([]);
  });

  it("replacing a plugin whose teardown throws tells of it, and sets the new one up", async () => {
    log.length = 0;
    const { plugins, teardownsFailed } = nannyWith({
      stuck: () => ({
        setup: () => void log.push("stuck setup"),
        teardown() {
          throw new Error("will not go");
        },
      }),
      make: (label) => logging(String(label)),
    });
    await plugins.add(spec("p", "stuck", []));
    expect(await plugins.add(spec("p", "make", ["two"]))).toEqual({ setUp: true, restart: false });
    expect(log).toEqual(["stuck setup", "two setup tcp://w:1"]);
    expect(teardownsFailed).toEqual(["p: will not go"]);
    expect(plugins.names).toEqual(["p"]);
  });

  it("restarts as the registration says, else as the plugin's own restart says", async () => {
    const { plugins } = nannyWith({
      yes: () => logging("yes", true),
      no: () => logging("no"),
    });
    expect((await plugins.add(spec("a", "yes", []))).restart).toBe(true);
    expect((await plugins.add(spec("b", "yes", [], false))).restart).toBe(false);
    expect((await plugins.add(spec("c", "no", []))).restart).toBe(false);
    expect((await plugins.add(spec("d", "no", [], true))).restart).toBe(true);
  });

  it("keeps no plugin that cannot be made or set up, and says why", async () => {
    log.length = 0;
    const { plugins } = nannyWith({
      make: (label) => logging(String(label)),
      failing: () => ({
        setup() {
          throw new Error("no setup today");
        },
      }),
      number: () => 42,
      badRestart: () => ({ setup() {}, restart: "yes" }),
    });
    await plugins.add(spec("p", "make", ["one"]));
    await expect(plugins.add(spec("p", "unknown", []))).rejects.toThrow("no task function unknown");
    // The one there stays when its replacement cannot even be made.
    expect(plugins.names).toEqual(["p"]);
    await expect(plugins.add(spec("p", "number", []))).rejects.toThrow(
      'nanny plugin "p": expected an object with setup or teardown methods, got 42',
    );
    await expect(plugins.add(spec("r", "badRestart", []))).rejects.toThrow(
      'nanny plugin "r": its restart is not true or false ("yes")',
    );
    await expect(plugins.add(spec("p", "failing", []))).rejects.toThrow("no setup today");
    expect(plugins.names).toEqual([]);
    expect(log).toEqual(["one setup tcp://w:1", "one teardown"]);
    // Given again, it is tried again (it was not kept).
    await expect(plugins.add(spec("p", "failing", []))).rejects.toThrow("no setup today");
  });

  it("a plugin not made or set up within the setup timeout fails, named, is not kept, and holds up no later add; a late setup is undone", async () => {
    log.length = 0;
    const waitMs = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const { plugins } = nannyWith(
      {
        make: (label) => logging(String(label)),
        never: () => ({ setup: () => new Promise(() => {}) }),
        slow: () => ({
          setup: () => waitMs(300).then(() => void log.push("slow setup")),
          teardown: () => void log.push("slow teardown"),
        }),
        neverMade: () => new Promise(() => {}),
      },
      100,
    );
    // Before, the add waited on the setup for good, and every add and removal after it too.
    await expect(plugins.add(spec("n", "never", []))).rejects.toThrow(
      'nanny plugin "n": its setup did not finish within 0.1 s: not kept',
    );
    await expect(plugins.add(spec("m", "neverMade", []))).rejects.toThrow(
      'nanny plugin "m": making it did not finish within 0.1 s: not kept',
    );
    await expect(plugins.add(spec("s", "slow", []))).rejects.toThrow(
      'nanny plugin "s": its setup did not finish within 0.1 s: not kept',
    );
    await plugins.add(spec("p", "make", ["one"]));
    expect(plugins.names).toEqual(["p"]);
    await waitMs(400);
    expect(log).toEqual(["one setup tcp://w:1", "slow setup", "slow teardown"]);
    // Given again, it is tried again (it was not kept).
    await expect(plugins.add(spec("n", "never", []))).rejects.toThrow("did not finish");
  });

  it("the teardown that throws of a plugin whose setup ended past its timeout is told, as a replaced one's", async () => {
    const { plugins, teardownsFailed } = nannyWith(
      {
        slow: () => ({
          setup: () => new Promise((r) => setTimeout(r, 150)),
          teardown: () => {
            throw new Error("cannot undo");
          },
        }),
      },
      50,
    );
    await expect(plugins.add(spec("s", "slow", []))).rejects.toThrow("did not finish");
    await new Promise((r) => setTimeout(r, 300));
    // Before, swallowed: the late teardown's error went nowhere.
    expect(teardownsFailed).toEqual(["s: cannot undo"]);
    expect(plugins.names).toEqual([]);
  });

  it("a setup that ends past its timeout is torn down in turn: not beside a later add of its name", async () => {
    const order: string[] = [];
    let finishOld = () => {};
    let finishNew = () => {};
    const { plugins } = nannyWith(
      {
        old: () => ({
          setup: () =>
            new Promise<void>((resolve) => {
              finishOld = resolve;
            }),
          teardown: () => void order.push("old teardown"),
        }),
        new: () => ({
          setup: () => {
            order.push("new setup begins");
            return new Promise<void>((resolve) => {
              finishNew = () => {
                order.push("new setup ends");
                resolve();
              };
            });
          },
        }),
      },
      300,
    );
    await expect(plugins.add(spec("p", "old", []))).rejects.toThrow("did not finish within 0.3 s");
    const second = plugins.add(spec("p", "new", []));
    while (!order.includes("new setup begins")) await new Promise((r) => setTimeout(r, 5));
    finishOld();
    await new Promise((r) => setTimeout(r, 20));
    finishNew();
    await second;
    while (!order.includes("old teardown")) await new Promise((r) => setTimeout(r, 5));
    // Before, the late teardown ran at once, in the middle of the new one's setup.
    expect(order).toEqual(["new setup begins", "new setup ends", "old teardown"]);
    expect(plugins.names).toEqual(["p"]);
  });

  it("a close waits, within its budget, for a setup that ended past its timeout and for the teardown it then queues", async () => {
    const order: string[] = [];
    let finishSetup = () => {};
    const { plugins } = nannyWith(
      {
        late: () => ({
          setup: () =>
            new Promise<void>((resolve) => {
              finishSetup = resolve;
            }),
          teardown: () =>
            new Promise<void>((resolve) =>
              setTimeout(() => {
                order.push("late teardown");
                resolve();
              }, 50),
            ),
        }),
      },
      100,
    );
    await expect(plugins.add(spec("p", "late", []))).rejects.toThrow("did not finish within 0.1 s");
    const budget = new CloseBudget(10);
    const closed = plugins.removeAll(() => {}, budget).then(() => void order.push("closed"));
    // The setup ends once the close has begun: its teardown is queued after it.
    await new Promise((r) => setTimeout(r, 20));
    finishSetup();
    await closed;
    budget.clear();
    // Before, the close ended at once, its process free to exit mid-teardown.
    expect(order).toEqual(["late teardown", "closed"]);
  });

  it("a close whose budget runs out on a late setup names it and goes on", async () => {
    const { plugins } = nannyWith({ never: () => ({ setup: () => new Promise(() => {}) }) }, 20);
    await expect(plugins.add(spec("n", "never", []))).rejects.toThrow("did not finish");
    const unfinished: string[] = [];
    const budget = new CloseBudget(0.1);
    await plugins.removeAll(
      () => {},
      budget,
      (name, step) => void unfinished.push(`${name} ${step}`),
    );
    budget.clear();
    expect(unfinished).toEqual(["n setup"]);
  });

  it("an add or removal is bound from being asked, its wait behind the others included: not begun by then, it is not carried out; a step is given only what is left", async () => {
    const made: string[] = [];
    const waitMs = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const factories = {
      neverMade: () => new Promise(() => {}),
      quick: () => ({ setup() {} }),
      // Made, then set up, each well within the timeout: 600 ms or more of the queue.
      slow: () => waitMs(300).then(() => ({ setup: () => waitMs(300) })),
      never: (label: unknown) => {
        made.push(String(label));
        return { setup: () => new Promise(() => {}) };
      },
    };
    // Each request may take 3 × 500 ms from being asked: "c" comes after 1.1 s or more.
    const { plugins } = nannyWith(factories, 500);
    const ahead = [plugins.add(spec("s", "slow", [])), plugins.add(spec("a", "neverMade", []))];
    // Before, it was given its whole 0.5 s once its turn came, 1.1 s after it was asked:
    // past what the worker waits for it.
    await expect(plugins.add(spec("c", "never", ["c"]))).rejects.toThrow(
      /^nanny plugin "c": its setup did not finish within 0\.\d s, what was left of the 1\.5 s an add or removal may take from being asked: not kept$/,
    );
    await Promise.allSettled(ahead);
    expect(made).toEqual(["c"]);

    const { plugins: busy } = nannyWith(factories, 100);
    await busy.add(spec("s", "quick", []));
    // Four of 0.1 s each ahead: "d"'s turn comes 0.4 s after, well past its 0.3 s (with
    // three, its turn came at the very end of them, and a few ms of timer lag decided
    // between "not begun" and begun with 0 s left).
    const late = [1, 2, 3, 4].map((i) => busy.add(spec(`n${i}`, "neverMade", [])));
    const notBegun = busy.add(spec("d", "never", ["d"]));
    const notRemoved = busy.remove("s");
    // Before, carried out once its turn came, though the worker had given up on it.
    await expect(notBegun).rejects.toThrow(
      'nanny plugin "d": not begun within 0.3 s of being asked (the nanny busy meanwhile, with those asked before it): not added',
    );
    await expect(notRemoved).rejects.toThrow(
      'nanny plugin "s": not begun within 0.3 s of being asked (the nanny busy meanwhile, with those asked before it): not removed',
    );
    await Promise.allSettled(late);
    expect(made).toEqual(["c"]);
    expect(busy.names).toEqual(["s"]);
  });

  it("refuses a setup timeout, or an answer timeout, that is not one", () => {
    expect(() => nannyWith({}, 0)).toThrow(
      "NannyPlugins: setupTimeoutMs must be a positive number of ms, at most 2147483647 (about 24.8 days), or Infinity (no limit), got 0",
    );
    expect(() => ipcNannyLink(channelPair().worker, Number.NaN)).toThrow(
      "ipcNannyLink: answerTimeoutMs must be a positive number of ms",
    );
  });

  it("a teardown that does not finish within the timeout, as the plugin is removed or replaced, fails that removal, named, and holds up no later one", async () => {
    log.length = 0;
    const { plugins, teardownsFailed } = nannyWith(
      {
        make: (label) => logging(String(label)),
        stuck: () => ({ setup() {}, teardown: () => new Promise(() => {}) }),
      },
      100,
    );
    await plugins.add(spec("s", "stuck", []));
    // Before, the removal waited for good, and every add and removal after it too.
    await expect(plugins.remove("s")).rejects.toThrow(
      'nanny plugin "s": its teardown did not finish within 0.1 s: no longer waited on',
    );
    expect(plugins.names).toEqual([]);
    await plugins.add(spec("s", "stuck", []));
    // Replaced: the new one is set up all the same, the old one's teardown told of.
    await plugins.add(spec("s", "make", ["one"]));
    expect(teardownsFailed).toEqual([
      's: nanny plugin "s": its teardown did not finish within 0.1 s: no longer waited on',
    ]);
    expect(plugins.names).toEqual(["s"]);
    expect(log).toEqual(["one setup tcp://w:1"]);
  });

  it("a nanny whose plugins' hooks never end, closed within its budget, lets its process exit then, not at the 5-minute hook timeout", async () => {
    // A nanny stopped with a teardown, and a setup, that never end: its close gives up on
    // them at its budget, but the hooks' own timers held the process for 5 minutes more.
    const script =
      `const { NannyPlugins } = await import(${JSON.stringify(NANNY_PLUGINS)});\n` +
      `const { CloseBudget } = await import(${JSON.stringify(CLOSE_BUDGET)});\n` +
      "const never = () => new Promise(() => {});\n" +
      "const hooks = { stuckDown: () => ({ setup() {}, teardown: never }), stuckUp: () => ({ setup: never }) };\n" +
      "const plugins = new NannyPlugins({ env: {}, workerAddress: null }, (fn) => hooks[fn], () => {});\n" +
      'await plugins.add({ name: "down", fn: "stuckDown", args: [] });\n' +
      'void plugins.add({ name: "up", fn: "stuckUp", args: [] }).catch(() => {});\n' +
      "const budget = new CloseBudget(0.2);\n" +
      "await plugins.removeAll(() => {}, budget);\n" +
      "budget.clear();\n" +
      'process.stdout.write("closed\\n");\n';
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exit = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("still running");
      }, 20_000);
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        resolve(code ?? signal ?? "?");
      });
    });
    expect(out).toBe("closed\n");
    expect(exit).toBe(0);
  }, 30_000);

  it("environ sets the variables for the workers to come, restarts, and takes them back when removed", async () => {
    const { nanny, plugins } = nannyWith({});
    const env = spec("env", environ.name, [{ FOO: "1", BAR: "x" }]);
    expect(await plugins.add(env)).toEqual({ setUp: true, restart: true });
    expect(nanny.env).toEqual({ FOO: "1", BAR: "x" });
    nanny.env.BAR = "changed since";
    expect(await plugins.remove("env")).toBe(true);
    expect(nanny.env).toEqual({ BAR: "changed since" });
    await expect(plugins.add(spec("env", environ.name, [{ FOO: 1 }]))).rejects.toThrow(
      "environ: the value of FOO must be a string without NUL characters, got 1",
    );
    await expect(plugins.add(spec("env", environ.name, []))).rejects.toThrow(
      "environ: expected one argument, the variables, got 0",
    );
  });
});

/** Two ends of an IPC channel, in one process: what one sends, the other receives. */
function channelPair(): { worker: IpcEnd & EventEmitter; nanny: IpcEnd & EventEmitter } {
  const end = (): IpcEnd & EventEmitter & { other?: EventEmitter; connected: boolean } =>
    Object.assign(new EventEmitter(), { connected: true });
  const worker = end();
  const nanny = end();
  const sendTo =
    (to: EventEmitter) =>
    (message: unknown, callback?: (err: Error | null) => void): boolean => {
      setImmediate(() => {
        to.emit("message", structuredClone(message));
        callback?.(null);
      });
      return true;
    };
  worker.send = sendTo(nanny);
  nanny.send = sendTo(worker);
  return { worker, nanny };
}

describe("the link between a worker and its nanny", () => {
  it("carries adds and removals to the nanny's plugins, and their answers and errors back", async () => {
    log.length = 0;
    const { worker, nanny: nannyEnd } = channelPair();
    const { nanny, plugins } = nannyWith({ make: (label) => logging(String(label), true) });
    const said: string[] = [];
    const stop = serveNannyLink(nannyEnd, plugins, {
      worker: (address) => {
        (nanny as { workerAddress: string | null }).workerAddress = address;
      },
      added: (name, restart) => said.push(`added ${name} ${restart}`),
      removed: (name, had) => said.push(`removed ${name} ${had}`),
      failed: (name, why) => said.push(`failed ${name}: ${why}`),
    });
    const link = ipcNannyLink(worker);
    expect(await link.addPlugin(spec("p", "make", ["one"]), "tcp://w:2")).toEqual({
      restart: true,
    });
    expect(await link.addPlugin(spec("p", "make", ["one"]), "tcp://w:2")).toEqual({
      restart: false,
    });
    await expect(link.addPlugin(spec("q", "nothing", []), "tcp://w:2")).rejects.toThrow(
      "no task function nothing",
    );
    await expect(
      link.addPlugin({ name: "r", fn: "make", args: "x" } as never, "tcp://w:2"),
    ).rejects.toThrow("a nanny plugin's args must be an array");
    expect(await link.removePlugin("p")).toBe(true);
    expect(await link.removePlugin("p")).toBe(false);
    expect(log).toEqual(["one setup tcp://w:2", "one teardown"]);
    expect(said).toEqual([
      "added p true",
      "failed q: no task function nothing",
      "removed p true",
      "removed p false",
    ]);
    // No listener left on the worker's end between requests: it would hold the channel open.
    expect(worker.listenerCount("message")).toBe(0);
    stop();
    expect(nannyEnd.listenerCount("message")).toBe(0);
  });

  it("a request the nanny hears late is bound from when the worker sent it: past its bound, it is not carried out", async () => {
    log.length = 0;
    const { worker, nanny: nannyEnd } = channelPair();
    // A nanny whose event loop was busy: it hears the request 0.4 s after it was sent.
    const send = worker.send?.bind(worker);
    worker.send = (message, callback) => {
      setTimeout(() => send?.(message, callback), 400);
      return true;
    };
    const { plugins } = nannyWith({ make: (label) => logging(String(label)) }, 100);
    const said: string[] = [];
    serveNannyLink(nannyEnd, plugins, {
      worker: () => {},
      added: (name) => said.push(`added ${name}`),
      removed: () => {},
      failed: (name, why) => said.push(`failed ${name}: ${why}`),
    });
    // Before, bound from when the nanny heard it: set up after the worker's wait could be over.
    await expect(
      ipcNannyLink(worker).addPlugin(spec("p", "make", ["one"]), "tcp://w:2"),
    ).rejects.toThrow(
      'nanny plugin "p": not begun within 0.3 s of being asked (the nanny busy meanwhile, with those asked before it): not added',
    );
    expect(log).toEqual([]);
    expect(plugins.names).toEqual([]);
  });

  it("a request the channel cannot carry fails, leaving nothing waiting", async () => {
    const { worker } = channelPair();
    // As Node's JSON channel does for a BigInt: send throws at once.
    worker.send = () => {
      throw new TypeError("Do not know how to serialize a BigInt");
    };
    const link = ipcNannyLink(worker);
    await expect(link.addPlugin(spec("p", "make", [1n]), "tcp://w:2")).rejects.toThrow(
      "cannot reach the nanny: Do not know how to serialize a BigInt",
    );
    expect(worker.listenerCount("message")).toBe(0);
  });

  it("carries the worker's notice that it begins to close, as said; none once the nanny is gone", async () => {
    const { worker, nanny: nannyEnd } = channelPair();
    const { plugins } = nannyWith({});
    const told: string[] = [];
    const stop = serveNannyLink(nannyEnd, plugins, {
      worker: () => {},
      added: () => {},
      removed: () => {},
      failed: () => {},
      closing: (how) =>
        told.push(`restart ${how.restart} fault ${how.fault} startFailed ${how.startFailed}`),
    });
    const link = ipcNannyLink(worker);
    link.closing?.({ restart: true, fault: false });
    link.closing?.({ restart: false, fault: true });
    link.closing?.({ restart: false, fault: false, startFailed: true });
    await new Promise((r) => setImmediate(r));
    expect(told).toEqual([
      "restart true fault false startFailed false",
      "restart false fault true startFailed false",
      "restart false fault false startFailed true",
    ]);
    (worker as { connected: boolean }).connected = false;
    worker.emit("disconnect");
    link.closing?.({ restart: false, fault: false });
    await new Promise((r) => setImmediate(r));
    expect(told).toHaveLength(3);
    stop();
  });

  it("a request a live nanny never answers fails at the answer timeout, saying so, leaving nothing waiting", async () => {
    // The nanny's end hears the requests, and answers none (its event loop blocked, say).
    const { worker, nanny } = channelPair();
    const heard: unknown[] = [];
    nanny.on("message", (m) => heard.push(m));
    const link = ipcNannyLink(worker, 100);
    // Before, the request waited for good, and whoever waited on it (registerNannyPlugin) too.
    await expect(link.addPlugin(spec("p", "make", []), "tcp://w:2")).rejects.toThrow(
      `the nanny did not answer the add of nanny plugin "p" within 0.1 s (its event loop blocked, or a plugin's hook that never ends?)`,
    );
    await expect(link.removePlugin("p")).rejects.toThrow(
      'the nanny did not answer the removal of nanny plugin "p" within 0.1 s',
    );
    expect(heard).toHaveLength(2);
    expect(worker.listenerCount("message")).toBe(0);
    // Its late answer is dropped.
    worker.emit("message", { weftNanny: "answer", id: 1, restart: false });
  });

  it("a request to a nanny that is gone fails at once, saying so", async () => {
    const { worker } = channelPair();
    const link = ipcNannyLink(worker);
    // The nanny never answers this one: its channel closes meanwhile.
    const waiting = link.addPlugin(spec("p", "make", []), "tcp://w:2");
    (worker as { connected: boolean }).connected = false;
    worker.emit("disconnect");
    await expect(waiting).rejects.toThrow("the nanny is gone (its IPC channel closed)");
    await expect(link.removePlugin("p")).rejects.toThrow("the nanny is gone");
  });
});
