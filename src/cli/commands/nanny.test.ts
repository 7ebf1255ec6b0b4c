import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Command } from "commander";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "../../client/client.ts";
import { NannyPluginError } from "../../client/errors.ts";
import { eventually } from "../../client/testCluster.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { environ } from "../../worker/environ.ts";
import { weftModuleUrl } from "../testBuiltCommand.ts";
import { testContext, writeStuckSetupPreload } from "../testContext.ts";
import { freePort } from "./contactAddress.ts";
import type { CliContext } from "./context.ts";
import { givenArgs, nannyPluginFactories, RESTARTING_LINE, runNanny } from "./nanny.ts";
import { NANNY_GONE_EXIT_MS } from "./nannyChildExit.ts";
import { alive, running, writtenPid } from "./testProcesses.ts";

/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/** A scheduler on 127.0.0.1 that logs nothing. */
function quietScheduler(): Promise<Scheduler> {
  return Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: pino({ level: "silent" }) });
}

/** `runNanny` of `weft worker args`, until `stop()`. */
function startNanny(
  args: string[],
  maxRestarts: number,
  ctx: CliContext,
  taskModules: string[] = [],
): { nanny: Promise<void>; stop: () => void } {
  let stop!: () => void;
  const stopped = new Promise<void>((r) => {
    stop = r;
  });
  return { nanny: runNanny({ args, maxRestarts, stop: stopped, taskModules }, ctx), stop };
}

/** The nanny started its worker again, asked to (no fault): stopped, it exits 0. */
async function restartedThenStopped(
  ctx: ReturnType<typeof testContext>,
  nanny: Promise<void>,
  stop: () => void,
): Promise<void> {
  expect(ctx.stderr.text).toContain(
    "weft worker: nanny: the worker is restarted (by the scheduler, at the end of its --lifetime, or for a nanny plugin); starting a new one",
  );
  expect(ctx.stderr.text).not.toContain("on a fault");
  stop();
  await nanny;
  expect(ctx.exitCode).toBe(0);
}

const dir = mkdtempSync(join(tmpdir(), "weft-nanny-"));
/**
 * The task registry, for the task modules the tests write: the build's for a built
 * worker, which cannot import TypeScript from a `.mjs` module. Either copy registers
 * where the nanny and the worker look (one registry per thread, on `globalThis`).
 */
const registry = weftModuleUrl("worker/taskRegistry.ts");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A nanny whose worker runs the tasks `definitions` (`defineTask(...)` lines) define,
 * on a quiet scheduler at most `maxRestarts` restarts in a row, with a client:
 * `body` gets them; then the nanny is stopped, and must end with exit 0.
 */
async function withNanny(
  name: string,
  definitions: string,
  maxRestarts: number,
  body: (client: Client, ctx: ReturnType<typeof testContext>) => Promise<void>,
): Promise<void> {
  const scheduler = await quietScheduler();
  const tasks = join(dir, `${name}.mjs`);
  writeFileSync(tasks, `import { defineTask } from ${JSON.stringify(registry)};\n${definitions}`);
  const ctx = testContext();
  const { nanny, stop } = startNanny(
    [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks],
    maxRestarts,
    ctx,
  );
  const client = await Client.connect(scheduler.address);
  try {
    await body(client, ctx);
    stop();
    await nanny;
    expect(ctx.exitCode).toBe(0);
  } catch (err) {
    throw withNannyOutput(err, ctx);
  } finally {
    await client.close();
    await scheduler.close();
  }
}

/**
 * `err` with what the nanny and its workers printed: a failed wait alone does not say
 * whether a worker never started, crashed or never reached its scheduler.
 */
function withNannyOutput(err: unknown, ctx: ReturnType<typeof testContext>): unknown {
  if (!(err instanceof Error)) return err;
  err.message += `\n--- the nanny's stdout:\n${ctx.stdout.text}--- its stderr:\n${ctx.stderr.text}`;
  return err;
}

/** The `worker at …` lines the nanny's children printed so far. */
function workerLines(ctx: { stdout: { text: string } }): number {
  return ctx.stdout.text.match(/^worker at /gm)?.length ?? 0;
}

describe("givenArgs", () => {
  it("gives back the options set on the command line, but those dropped", () => {
    const cmd = new Command("w")
      .argument("<s>")
      .option("--tasks <m>", "", (v: string, p: string[]) => [...p, v], [] as string[])
      .option("--nthreads <n>")
      .option("--validate")
      .option("--nanny")
      .option("--level <l>", "", "info")
      .exitOverride();
    cmd.parse(["tcp://s:1", "--tasks", "a.ts", "--nanny", "--tasks", "b.ts", "--validate"], {
      from: "user",
    });
    expect(givenArgs(cmd, ["tcp://s:1"], ["--nanny"])).toEqual([
      "tcp://s:1",
      "--tasks",
      "a.ts",
      "--tasks",
      "b.ts",
      "--validate",
    ]);
  });
});

describe("nannyPluginFactories", () => {
  it("finds the built-in ones, then the task functions of the worker's task modules, else says where it looked", async () => {
    const tasks = join(dir, "factories.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        'defineTask("nannyFactories.marker", () => ({ setup() {} }));\n',
    );
    const factories = nannyPluginFactories([tasks]);
    expect(await factories(environ.name, [])).toBeTypeOf("function");
    expect(await factories("nannyFactories.marker", [])).toBeTypeOf("function");
    await expect(factories("nannyFactories.none", [])).rejects.toThrow(
      `the nanny has no task function "nannyFactories.none": it makes nanny plugins with the worker's own --tasks modules and those loaded into the cluster (${tasks})`,
    );
    await expect(nannyPluginFactories([join(dir, "missing.mjs")])("x", [])).rejects.toThrow(
      /^the nanny cannot import the worker's task modules/,
    );
    // Those of the modules loaded into the cluster, which the worker names with the plugin.
    const loaded = pathToFileURL(join(dir, "loaded.mjs")).href;
    writeFileSync(
      new URL(loaded),
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        'defineTask("nannyFactories.loaded", () => ({ setup() {} }));\n',
    );
    expect(await factories("nannyFactories.loaded", [tasks, loaded])).toBeTypeOf("function");
    await expect(factories("nannyFactories.none", [loaded])).rejects.toThrow(
      `(${tasks}, ${loaded})`,
    );
    const missing = pathToFileURL(join(dir, "gone.mjs")).href;
    await expect(factories("nannyFactories.other", [missing])).rejects.toThrow(
      `the nanny cannot import ${missing}, a task module loaded into the cluster`,
    );
  });
});

// Each test has its own scheduler, nanny and processes, and most of their time is a
// process starting or a real wait: run side by side.
describe.concurrent("weft worker --nanny", () => {
  it("runs nanny plugins: environ sets a variable and restarts the worker, once; a plugin of the task modules; an unknown one is an error", async () => {
    const scheduler = await quietScheduler();
    const tasks = join(dir, "nannyPlugins.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        'defineTask("nanny.env", (name) => process.env[name] ?? null);\n' +
        'defineTask("nanny.mark", (value) => ({ restart: true, setup(nanny) { nanny.env.MARK = value + " " + nanny.workerAddress; } }));\n' +
        'import { writeFileSync } from "node:fs";\n' +
        'defineTask("nanny.tornDown", (path) => ({ teardown() { writeFileSync(path, "torn down"); } }));\n',
    );
    const tornDown = join(dir, "torn-down");
    const ctx = testContext();
    const { nanny, stop } = startNanny(
      [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks],
      0,
      ctx,
      [tasks],
    );
    const client = await Client.connect(scheduler.address);
    const restarts = () => ctx.stderr.text.split(RESTARTING_LINE).length - 1;
    /** The one worker, once it is another than `than`. */
    const nextWorker = async (than: string): Promise<string> => {
      for (let i = 0; i < 600; i++) {
        const ws = await client.workers();
        if (ws.length === 1 && ws[0].address !== than) return ws[0].address;
        await sleep(100);
      }
      throw new Error(`no worker in place of ${than}`);
    };
    try {
      const [first] = await client.waitForWorkers(1, { timeoutMs: 60_000 });
      expect(await client.run("nanny.env", "FOO")).toEqual({ [first.address]: null });
      const added = await client.registerNannyPlugin(environ, { args: [{ FOO: "1" }] });
      expect(added[first.address]).toBe("OK");
      const second = await nextWorker(first.address);
      expect(await client.run("nanny.env", "FOO")).toEqual({ [second]: "1" });
      expect(restarts()).toBe(1);
      expect(ctx.stderr.text).toContain(
        'weft worker: nanny: nanny plugin "weft.environ" set up; it restarts the worker',
      );
      // The new worker handed the recorded plugin over again, and registering it again
      // does the same: the nanny has it, and does not restart its worker again.
      expect(await client.registerNannyPlugin(environ, { args: [{ FOO: "1" }] })).toEqual({
        [second]: "OK",
      });
      await sleep(1_000);
      expect(await client.workers()).toMatchObject([{ address: second }]);
      expect(restarts()).toBe(1);
      expect(workerLines(ctx)).toBe(2);

      // A factory of the worker's --tasks module, which the nanny imports.
      expect(await client.registerNannyPlugin("nanny.mark", { args: ["m"] })).toEqual({
        [second]: "OK",
      });
      const third = await nextWorker(second);
      expect(await client.run("nanny.env", "MARK")).toEqual({ [third]: `m ${second}` });
      expect(await client.run("nanny.env", "FOO")).toEqual({ [third]: "1" });

      const unknown = await client.registerNannyPlugin("nanny.none").catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(NannyPluginError);
      expect(unknown).toMatchObject({ worker: third, plugin: "nanny.none" });
      expect((unknown as Error).message).toContain(
        'its nanny: the nanny has no task function "nanny.none"',
      );
      expect(await client.unregisterNannyPlugin("nanny.mark")).toEqual({ [third]: true });
      expect(restarts()).toBe(2);
      // The nanny tears its plugins down as it stops.
      await client.registerNannyPlugin("nanny.tornDown", { args: [tornDown] });
      expect(existsSync(tornDown)).toBe(false);
      stop();
      await nanny;
      expect(ctx.exitCode).toBe(0);
      expect(readFileSync(tornDown, "utf8")).toBe("torn down");
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it("a nanny plugin whose setup never ends fails its registerNannyPlugin at the setup timeout, named, and holds up no later one", async () => {
    const scheduler = await quietScheduler();
    const tasks = join(dir, "neverSetUp.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        'defineTask("nanny.never", () => ({ setup() { return new Promise(() => {}); } }));\n' +
        'defineTask("nanny.quick", () => ({ setup() {} }));\n' +
        'defineTask("nanny.warm", () => ({ setup() {} }));\n',
    );
    const ctx = testContext();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => {
      stop = r;
    });
    const args = [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks];
    const nanny = runNanny(
      {
        args,
        maxRestarts: 0,
        stop: stopped,
        taskModules: [tasks],
        pluginSetupTimeoutMs: 1_000,
        // The setup that never ends lingers (torn down if it ends): the close waits this long on it.
        closeTimeoutMs: 1_000,
      },
      ctx,
    );
    const client = await Client.connect(scheduler.address);
    try {
      const [w] = await client.waitForWorkers(1, { timeoutMs: 60_000 });
      // The nanny imports the task module as a plugin first needs it: done here, so that the
      // timeout below meets the setup. On a loaded host (12 busy loops on 2 cores) the import
      // alone took the whole second: "making it did not finish within 1 s", 3 runs in 3. The
      // import goes on past a timeout, so a later add finds it done.
      const t0 = Date.now();
      let warm: unknown = null;
      while (warm === null) {
        if (Date.now() - t0 > 60_000) throw new Error("no nanny plugin made within 60 s");
        warm = await client.registerNannyPlugin("nanny.warm").catch(() => null);
      }
      expect(warm).toEqual({ [w.address]: "OK" });
      // Before, the client, its worker and the nanny's later adds all waited for good.
      const failed = await client.registerNannyPlugin("nanny.never").catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(NannyPluginError);
      expect(failed).toMatchObject({ worker: w.address, plugin: "nanny.never" });
      expect((failed as Error).message).toContain(
        'its nanny: nanny plugin "nanny.never": its setup did not finish within 1 s: not kept',
      );
      expect(await client.registerNannyPlugin("nanny.quick")).toEqual({ [w.address]: "OK" });
      stop();
      await nanny;
      expect(ctx.exitCode).toBe(0);
      expect(ctx.stderr.text).toContain(
        'weft worker: nanny: the setup of nanny plugin "nanny.never" did not finish within 1 s: no longer waited on',
      );
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      stop();
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it.concurrent("a nanny plugin that sets an environment no process can have ends the nanny as a start that failed (exit 2), said, not as a crash", async () => {
    const scheduler = await quietScheduler();
    const tasks = join(dir, "badEnv.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(registry)};\n` +
        'defineTask("nanny.badEnv", () => ({ restart: true, setup(nanny) { nanny.env.BAD = "a\\0b"; } }));\n',
    );
    const ctx = testContext();
    const { nanny, stop } = startNanny(
      [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks],
      0,
      ctx,
      [tasks],
    );
    const client = await Client.connect(scheduler.address);
    try {
      await client.waitForWorkers(1, { timeoutMs: 60_000 });
      await client.registerNannyPlugin("nanny.badEnv");
      // Before, spawn's throw rejected runNanny: the command crashed.
      await nanny;
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).toContain(
        "weft worker: nanny: cannot start a worker process: The property 'options.env['BAD']' must be a string without null bytes",
      );
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      stop();
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it("starts another worker process when one stops on a fault, and stops with it", async () => {
    const definitions =
      'defineTask("nanny.exit", () => process.exit(1));\n' +
      'defineTask("nanny.kill", () => process.kill(process.pid, "SIGKILL"));\n';
    await withNanny("exiting", definitions, 2, async (client, ctx) => {
      const [first] = await client.waitForWorkers(1, { timeoutMs: 60_000 });
      // The worker process dies of its task (exit 1): the nanny starts another.
      void client.runWith({ onError: "return" }, "nanny.exit");
      for (let i = 0; i < 600; i++) {
        const ws = await client.workers();
        if (ws.length === 1 && ws[0].address !== first.address) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const [second] = await client.workers();
      expect(second.address).not.toBe(first.address);
      expect(ctx.stderr.text).toContain(
        "weft worker: nanny: the worker stopped on a fault; starting another (1 of at most 2 in a row)",
      );
      // The child's line reaches the nanny's stdout through a pipe: maybe after it registered.
      await eventually(() => workerLines(ctx) === 2, 30_000, "the new worker's line");
      // Killed (the kernel's out-of-memory killer sends SIGKILL): it cannot say so, the nanny does.
      void client.runWith({ onError: "return" }, "nanny.kill");
      await eventually(() => workerLines(ctx) === 3, 60_000, "the third worker's line");
      expect(ctx.stderr.text).toContain(
        "weft worker: nanny: the worker was killed (SIGKILL: out of memory? the system's log says; --memory-limit keeps a worker within one); starting another (2 of at most 2 in a row)",
      );
    });
  }, 120_000);

  /**
   * A nanny (at most one restart in a row, `healthyMs` the run that resets the count)
   * whose workers are made to exit 1 `faults` times, each once it has run `runMs`:
   * its stderr, and its exit code.
   */
  async function faultedNanny(
    name: string,
    healthyMs: number | undefined,
    faults: number,
    runMs: number,
  ): Promise<{ stderr: string; exitCode: number | undefined }> {
    const scheduler = await quietScheduler();
    const tasks = join(dir, `${name}.mjs`);
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(registry)};
defineTask("nanny.exit", () => process.exit(1));
`,
    );
    const ctx = testContext();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => {
      stop = r;
    });
    const nanny = runNanny(
      {
        args: [scheduler.address, "--nthreads", "1", "--executor", "inline", "--tasks", tasks],
        maxRestarts: 1,
        stop: stopped,
        ...(healthyMs !== undefined ? { healthyMs } : {}),
      },
      ctx,
    );
    const client = await Client.connect(scheduler.address);
    let ended = false;
    void nanny.then(() => {
      ended = true;
    });
    try {
      for (let fault = 1; fault <= faults; fault++) {
        await eventually(() => workerLines(ctx) === fault, 60_000, `worker ${fault}'s line`);
        await client.waitForWorkers(1, { timeoutMs: 60_000 });
        await sleep(runMs);
        void client.runWith({ onError: "return" }, "nanny.exit");
        await eventually(
          () => ended || ctx.stderr.text.split("stopped on a fault").length > fault,
          60_000,
          `fault ${fault} told`,
        );
      }
      stop();
      await nanny;
      return { stderr: ctx.stderr.text, exitCode: ctx.exitCode };
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      stop();
      await client.close();
      await scheduler.close();
    }
  }

  it.concurrent("gives up after --max-restarts faults in a row, saying it guards against a crash loop and how to allow more", async () => {
    const { stderr, exitCode } = await faultedNanny("crash-loop", undefined, 2, 0);
    expect(stderr).toContain(
      "weft worker: nanny: the worker stopped on a fault 2 times in a row, none of them running 60 s; giving up, as a worker that cannot run would only be started again and again (--max-restarts, now 1, sets how many restarts in a row are allowed; a worker that runs 60 s resets the count)\n",
    );
    expect(exitCode).toBe(1);
  }, 180_000);

  it.concurrent("counts faults in a row, not in its lifetime: a worker that ran healthyMs resets the count", async () => {
    // Three faults with one restart allowed in a row: each worker ran past healthyMs.
    const { stderr, exitCode } = await faultedNanny("healthy-between", 500, 3, 600);
    expect(stderr.match(/starting another \(1 of at most 1 in a row\)/g)).toHaveLength(3);
    expect(stderr).not.toContain("giving up");
    expect(exitCode).toBe(0);
  }, 180_000);

  it("starts another worker process when one exits on a fault while a process it started holds its output open", async () => {
    const pids = join(dir, "orphan-pids");
    // A task that starts a detached process sharing the worker's stdout and stderr, then dies.
    const definitions =
      'import { spawn } from "node:child_process";\n' +
      'import { appendFileSync } from "node:fs";\n' +
      'defineTask("nanny.orphan", () => {\n' +
      '  const c = spawn("sleep", ["60"], { stdio: ["ignore", "inherit", "inherit"], detached: true });\n' +
      `  appendFileSync(${JSON.stringify(pids)}, c.pid + "\\n");\n` +
      "  c.unref();\n" +
      "  process.exit(1);\n" +
      "});\n";
    try {
      await withNanny("orphan", definitions, 1, async (client, ctx) => {
        await client.waitForWorkers(1, { timeoutMs: 60_000 });
        void client.runWith({ onError: "return" }, "nanny.orphan");
        // Before, the nanny waited for the pipes to close: for as long as the orphan lived.
        await eventually(() => workerLines(ctx) === 2, 60_000, "the second worker's line");
        expect(ctx.stderr.text).toContain(
          "weft worker: nanny: the worker process exited, but a process it started still holds its output open: that output is no longer forwarded",
        );
        expect(ctx.stderr.text).toContain(
          "weft worker: nanny: the worker stopped on a fault; starting another (1 of at most 1 in a row)",
        );
      });
    } finally {
      if (existsSync(pids)) {
        for (const pid of readFileSync(pids, "utf8").trim().split("\n").map(Number)) {
          // Not 0, an empty line: process.kill(0) signals the test's own process group.
          if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
        }
      }
    }
  }, 120_000);

  it("starts another worker process when someone else SIGTERMs it, as Dask's nanny does", async () => {
    const definitions =
      'defineTask("nanny.term", () => { process.kill(process.pid, "SIGTERM"); return 1; });\n';
    await withNanny("terminated", definitions, 1, async (client, ctx) => {
      await client.waitForWorkers(1, { timeoutMs: 60_000 });
      // Before, the worker closed on it, exit 0, and so did the nanny, saying nothing.
      void client.runWith({ onError: "return" }, "nanny.term");
      await eventually(() => workerLines(ctx) === 2, 60_000, "the second worker's line");
      expect(ctx.stderr.text).toContain(
        "weft worker: nanny: the worker was stopped by a SIGTERM the nanny did not send; starting another (1 of at most 1 in a row)",
      );
    });
  }, 120_000);

  it("starts a new worker, at the same address, when the cluster restarts", async () => {
    const scheduler = await quietScheduler();
    const port = await freePort("127.0.0.1");
    const ctx = testContext();
    const { nanny, stop } = startNanny(
      [scheduler.address, "--nthreads", "1", "--executor", "inline"].concat([
        "--listen",
        `tcp://127.0.0.1:${port}`,
      ]),
      // Restarts asked for are no faults: they count against nothing.
      0,
      ctx,
    );
    const client = await Client.connect(scheduler.address);
    try {
      const [first] = await client.waitForWorkers(1, { timeoutMs: 60_000 });
      expect(scheduler.state.workers.get(first.address)?.nanny).toBe(true);
      for (let i = 1; i <= 2; i++) {
        await client.restart({ timeoutMs: 60_000 });
        const workers = await client.workers();
        expect(workers.map((w) => w.address)).toEqual([first.address]);
        await eventually(() => workerLines(ctx) === i + 1, 30_000, "the new worker's line");
      }
      await restartedThenStopped(ctx, nanny, stop);
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it("restarts a worker whose inline task left a timer at once: the closed process exits, though the timer would keep it", async () => {
    const started = join(dir, "lingering-started");
    await withNanny(
      "lingering",
      `import { writeFileSync } from "node:fs";\n` +
        `defineTask("nanny.linger", () => { writeFileSync(${JSON.stringify(started)}, ""); return new Promise((r) => setTimeout(r, 60_000)); });\n`,
      0,
      async (client, ctx) => {
        await client.waitForWorkers(1, { timeoutMs: 60_000 });
        void client
          .submit("nanny.linger")
          .result()
          .catch(() => {});
        await eventually(() => existsSync(started), 30_000, "the task's start");
        const asked = Date.now();
        // Before, the nanny waited for the old process, kept up by the timer, for 60 s.
        await client.restart({ timeoutMs: 20_000 });
        expect(Date.now() - asked).toBeLessThan(20_000);
        await eventually(() => workerLines(ctx) === 2, 30_000, "the new worker's line");
      },
    );
  }, 120_000);

  it("--lifetime-restart: the worker retires when its lifetime is over, and its nanny starts another", async () => {
    const scheduler = await quietScheduler();
    const ctx = testContext();
    const { nanny, stop } = startNanny(
      [scheduler.address, "--nthreads", "1", "--executor", "inline"].concat([
        "--lifetime",
        "1.5s",
        "--lifetime-restart",
      ]),
      0,
      ctx,
    );
    const client = await Client.connect(scheduler.address);
    try {
      const [first] = await client.waitForWorkers(1, { timeoutMs: 60_000 });
      const t0 = Date.now();
      while (!(await client.workers()).some((w) => w.address !== first.address)) {
        if (Date.now() - t0 > 60_000) throw new Error("no second worker");
        await sleep(100);
      }
      await restartedThenStopped(ctx, nanny, stop);
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      await client.close();
      await scheduler.close();
    }
  }, 120_000);

  it("what a worker says once its nanny is SIGKILLed reaches the nanny's stderr", async () => {
    const scheduler = await quietScheduler();
    const nanny = spawn(
      process.execPath,
      [WEFT_BIN, "worker", scheduler.address, "--nanny", "--nthreads", "1", "--executor", "inline"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    nanny.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    let worker: number | null = null;
    try {
      await eventually(() => stderr.includes('"msg":"worker started"'), 60_000, "worker started");
      // The worker process's own pid, from its log line.
      const started = stderr.split("\n").find((l) => l.includes('"msg":"worker started"'));
      worker = (JSON.parse(started as string) as { pid: number }).pid;
      expect(worker).not.toBe(nanny.pid);
      nanny.kill("SIGKILL");
      // Through pipes the nanny read, these lines went nowhere.
      await eventually(
        () => stderr.includes('"msg":"worker closed"'),
        NANNY_GONE_EXIT_MS + 10_000,
        "the worker's last lines",
      );
      expect(stderr).toContain("weft worker: its nanny is gone; closing");
    } finally {
      nanny.kill("SIGKILL");
      if (worker !== null && alive(worker)) process.kill(worker, "SIGKILL");
      await scheduler.close();
    }
  }, 120_000);

  it("a worker whose nanny died while it waits for its scheduler stops waiting", async () => {
    // No scheduler there: it would try to connect for a minute.
    const child = spawn(
      process.execPath,
      [
        WEFT_BIN,
        "worker",
        `tcp://127.0.0.1:${await freePort("127.0.0.1")}`,
        "--nthreads",
        "1",
        "--executor",
        "inline",
        "--connect-timeout",
        "60000",
      ],
      {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env: { ...process.env, WEFT_NANNY_CHILD: "1" },
      },
    );
    // Its log (on stderr) says it is waiting: only then is the nanny's end met in that
    // wait (before, it would be the next test's case, a worker still starting).
    let stderr = "";
    let markWaiting = () => {};
    const waiting = new Promise<void>((resolve) => {
      markWaiting = resolve;
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes("the scheduler refuses connections")) markWaiting();
    });
    child.once("exit", () => markWaiting()); // ended early: the checks below say how
    const started = Date.now();
    try {
      await waiting;
      child.disconnect();
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      // Well within the minute it would otherwise try for.
      expect(Date.now() - started).toBeLessThan(45_000);
      expect(code).toBe(0);
      expect(stderr).toContain("weft worker: its nanny is gone; closing");
      expect(stderr).not.toContain("cannot start");
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);

  it("stopped while its worker's start never ends (a weftSetup that never resolves): the worker closes, its preload torn down, and the nanny ends", async () => {
    const scheduler = await quietScheduler();
    const marks = join(dir, "marks-stuck-setup.txt");
    const preload = join(dir, "stuck-setup.mjs");
    writeStuckSetupPreload(preload, marks);
    const ctx = testContext();
    const { nanny, stop } = startNanny(
      [scheduler.address, "--nthreads", "1", "--executor", "inline", "--preload", preload],
      0,
      ctx,
    );
    try {
      for (let i = 0; i < 600 && !existsSync(marks); i++) await sleep(100);
      stop();
      // Before, the worker's start waited on the weftSetup for good, and the nanny on it.
      const ended = await Promise.race([nanny.then(() => "ended"), sleep(60_000, "still running")]);
      expect(ended).toBe("ended");
      expect(ctx.exitCode).toBe(0);
      expect(readFileSync(marks, "utf8")).toBe("up\ndown\n");
      expect(scheduler.state.workers.size).toBe(0);
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      stop();
      await scheduler.close();
    }
  }, 120_000);

  /**
   * Appends this process's id to `marks`, then blocks its event loop for good: in
   * `Atomics.wait`, which holds the thread as a busy loop would without using a core
   * (a core each would slow the test files running beside these).
   */
  const blocking = (marks: string) =>
    `appendFileSync(${JSON.stringify(marks)}, \`\${process.pid}\\n\`); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);`;
  const stuck = [
    {
      how: "still loading (its task module blocks as it is imported)",
      module: (marks: string) => `import { appendFileSync } from "node:fs";\n${blocking(marks)}\n`,
      args: (file: string) => ["--tasks", file],
      task: false,
    },
    {
      how: "running a task that blocks its event loop",
      module: (marks: string) =>
        `import { appendFileSync } from "node:fs";\nimport { defineTask } from ${JSON.stringify(registry)};\ndefineTask("nanny.block", () => { ${blocking(marks)} });\n`,
      args: (file: string) => ["--tasks", file],
      task: true,
    },
    {
      how: "closing to be restarted (its preload's weftTeardown blocks at the end of its --lifetime)",
      module: (marks: string) =>
        `import { appendFileSync } from "node:fs";\nexport function weftTeardown() { ${blocking(marks)} }\n`,
      args: (file: string) => ["--preload", file, "--lifetime", "1s", "--lifetime-restart"],
      task: false,
      // Its grace runs from the close's start, not the stop: 1 s could end before the test
      // saw the teardown block (a loaded host), and the stop find another worker.
      graceMs: 5_000,
    },
  ];
  /**
   * A nanny, its stop grace `graceMs` (1 s unless given), whose worker runs `module`
   * (written to a file that `args` gives the worker), on a quiet scheduler: `body`
   * gets them; then the nanny is stopped, and each process that wrote its id to
   * `marks` (a stuck one) SIGKILLed.
   */
  async function withStuckNanny(
    name: string,
    module: (marks: string) => string,
    args: (file: string) => string[],
    maxRestarts: number,
    body: (run: {
      scheduler: Scheduler;
      ctx: ReturnType<typeof testContext>;
      nanny: Promise<void>;
      stop: () => void;
      marks: string;
    }) => Promise<void>,
    graceMs = 1_000,
  ): Promise<void> {
    const scheduler = await quietScheduler();
    const marks = join(dir, `marks-${name}.txt`);
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, module(marks));
    const ctx = testContext();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => {
      stop = r;
    });
    const workerArgs = [
      scheduler.address,
      "--nthreads",
      "1",
      "--executor",
      "inline",
      ...args(file),
    ];
    const nanny = runNanny(
      { args: workerArgs, maxRestarts, stop: stopped, stopGraceMs: graceMs },
      ctx,
    );
    try {
      await body({ scheduler, ctx, nanny, stop, marks });
    } catch (err) {
      throw withNannyOutput(err, ctx);
    } finally {
      stop();
      if (existsSync(marks)) {
        for (const pid of readFileSync(marks, "utf8").trim().split("\n").map(Number)) {
          if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
        }
      }
      await scheduler.close();
    }
  }

  const killedClosing =
    "weft worker: nanny: the worker did not exit within 1 s of beginning to close (its event loop blocked, or its close stuck): killed it (SIGKILL)\n";

  for (const [i, c] of stuck.entries()) {
    it.concurrent(`stopped while its worker process is ${c.how}: the nanny SIGKILLs it past the grace, says so, and ends (exit 0)`, async () => {
      await withStuckNanny(
        `stuck-${i}`,
        c.module,
        c.args,
        0,
        async ({ scheduler, ctx, nanny, stop, marks }) => {
          const client = await Client.connect(scheduler.address);
          try {
            if (c.task) {
              await client.waitForWorkers(1, { timeoutMs: 60_000 });
              void client.runWith({ onError: "return" }, "nanny.block");
            }
            const pid = await writtenPid(marks, 60_000, "the stuck worker's process id");
            expect(alive(pid)).toBe(true);
            stop();
            // Before, the nanny sent one SIGTERM, which a blocked event loop never acts on, and waited for good.
            const ended = await Promise.race([
              nanny.then(() => "ended"),
              sleep(60_000, "still running"),
            ]);
            expect(ended).toBe("ended");
            expect(ctx.exitCode).toBe(0);
            // One closing to be restarted began to close before the stop: the earlier grace runs out first.
            const killedLine =
              /weft worker: nanny: the worker did not exit within \d+ s of (the nanny's SIGTERM|beginning to close) \(its event loop blocked, or its close stuck\): killed it \(SIGKILL\)\n/g;
            expect(ctx.stderr.text.match(killedLine)).toHaveLength(1);
            if (!c.how.startsWith("closing"))
              expect(ctx.stderr.text).toContain("of the nanny's SIGTERM");
            expect(ctx.stderr.text).not.toContain("starting another");
            expect(alive(pid)).toBe(false);
          } finally {
            await client.close();
          }
        },
        c.graceMs,
      );
    }, 120_000);
  }

  it.concurrent("a worker process stuck closing to be restarted, unstopped, is SIGKILLed past the grace and another started, as a restart", async () => {
    const module = (marks: string) =>
      `import { appendFileSync } from "node:fs";\nexport function weftTeardown() { ${blocking(marks)} }\n`;
    const args = (file: string) => ["--preload", file, "--lifetime", "1s", "--lifetime-restart"];
    await withStuckNanny("stuck-restart", module, args, 0, async ({ ctx, nanny, stop }) => {
      // Before, the nanny waited for good on a worker that never exited to be restarted.
      // (Two worker starts and a kill past the grace: 22-31 s on a host at load 13-16.)
      await eventually(() => workerLines(ctx) >= 2, 60_000, "a second worker");
      expect(ctx.stderr.text).toContain(killedClosing);
      expect(ctx.stderr.text).toContain(RESTARTING_LINE);
      expect(ctx.stderr.text).not.toContain("on a fault");
      stop();
      await nanny;
      expect(ctx.exitCode).toBe(0);
    });
  }, 120_000);

  it.concurrent("a worker process stuck closing on another's SIGTERM, unstopped, is SIGKILLed past the grace and another started, as on a fault", async () => {
    const module = (marks: string) =>
      `import { appendFileSync } from "node:fs";\nimport { defineTask } from ${JSON.stringify(registry)};\n` +
      'defineTask("nanny.termSelf", () => { process.kill(process.pid, "SIGTERM"); return 1; });\n' +
      `export function weftTeardown() { ${blocking(marks)} }\n`;
    const args = (file: string) => ["--tasks", file, "--preload", file];
    await withStuckNanny("stuck-term", module, args, 1, async ({ scheduler, ctx, nanny, stop }) => {
      const client = await Client.connect(scheduler.address);
      try {
        await client.waitForWorkers(1, { timeoutMs: 60_000 });
        void client.runWith({ onError: "return" }, "nanny.termSelf");
        await eventually(() => workerLines(ctx) >= 2, 60_000, "a second worker");
        expect(ctx.stderr.text).toContain(killedClosing);
        expect(ctx.stderr.text).toContain(
          "weft worker: nanny: the worker stopped on a fault; starting another (1 of at most 1 in a row)",
        );
        stop();
        await nanny;
        expect(ctx.exitCode).toBe(0);
      } finally {
        await client.close();
      }
    });
  }, 120_000);

  it.concurrent("a worker process stuck closing after its start failed (--death-timeout), unstopped, is SIGKILLed past the grace and the nanny ends with exit 2, as the worker would have", async () => {
    const module = (marks: string) =>
      `import { appendFileSync } from "node:fs";\nexport function weftSetup() { return new Promise(() => {}); }\nexport function weftTeardown() { ${blocking(marks)} }\n`;
    // Long enough for the preload to be imported first, its weftTeardown then known: at
    // 1 s, on a host at load 12-15, the start failed while it was still being imported,
    // and its close, with no teardown to run, was not stuck at all (2 runs in 3).
    const args = (file: string) => ["--preload", file, "--death-timeout", "3000"];
    await withStuckNanny("stuck-start", module, args, 1, async ({ ctx, nanny }) => {
      const ended = await Promise.race([nanny.then(() => "ended"), sleep(60_000, "still running")]);
      expect(ended).toBe("ended");
      expect(ctx.stderr.text).toContain(killedClosing);
      // Before, taken as a retirement: the nanny ended with 0, a start that failed said to have succeeded.
      expect(ctx.exitCode).toBe(2);
      expect(ctx.stderr.text).not.toContain("starting another");
    });
  }, 120_000);

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it.concurrent(`a worker retired at the end of its --lifetime and cut short by another's ${signal} as it closes is not started again: the nanny ends (exit 0), as when the close ends`, async () => {
      const module = () =>
        `export function weftTeardown() { process.kill(process.pid, ${JSON.stringify(signal)}); }\n`;
      const args = (file: string) => ["--preload", file, "--lifetime", "1s"];
      // A grace the close never nears: it ends by the signal, not by the nanny's SIGKILL.
      await withStuckNanny(
        `retired-${signal}`,
        module,
        args,
        0,
        async ({ ctx, nanny }) => {
          const ended = await Promise.race([
            nanny.then(() => "ended"),
            sleep(60_000, "still running"),
          ]);
          expect(ended).toBe("ended");
          // Before, taken as a fault: started again (here given up on, exit 1), while the
          // same close SIGKILLed past its grace ended the nanny.
          expect(ctx.stderr.text).not.toContain("starting another");
          expect(ctx.stderr.text).not.toContain("giving up");
          expect(ctx.exitCode).toBe(0);
          expect(ctx.stderr.text).not.toContain("killed it (SIGKILL)");
        },
        30_000,
      );
    }, 120_000);
  }

  it("a worker whose nanny died while it was starting closes once started", async () => {
    const scheduler = await quietScheduler();
    // As a nanny's child, whose channel closes before the child listens for it.
    const child = spawn(
      process.execPath,
      [WEFT_BIN, "worker", scheduler.address, "--nthreads", "1", "--executor", "inline"],
      {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env: { ...process.env, WEFT_NANNY_CHILD: "1" },
      },
    );
    child.disconnect();
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).toBe(0);
      expect(stderr).toContain("weft worker: its nanny is gone; closing");
    } finally {
      child.kill("SIGKILL");
      await scheduler.close();
    }
  }, 120_000);

  for (const how of ["Ctrl-C", "the nanny SIGKILLed"] as const) {
    it(`${how}: the worker closes in order, its teardown not cut short`, async () => {
      const scheduler = await quietScheduler();
      const marks = join(dir, `marks-${how === "Ctrl-C" ? "int" : "kill"}.txt`);
      const preload = join(dir, `slow-teardown-${how === "Ctrl-C" ? "int" : "kill"}.mjs`);
      writeFileSync(
        preload,
        `import { appendFileSync } from "node:fs";
export function weftSetup() { appendFileSync(${JSON.stringify(marks)}, "setup\\n"); }
export async function weftTeardown() {
  appendFileSync(${JSON.stringify(marks)}, "teardown-start\\n");
  await new Promise((r) => setTimeout(r, 500));
  appendFileSync(${JSON.stringify(marks)}, "teardown-done\\n");
}
`,
      );
      // Its own process group, as a shell gives a job: a Ctrl-C signals the whole group.
      const nanny = spawn(
        process.execPath,
        [WEFT_BIN, "worker", scheduler.address, "--nanny", "--nthreads", "1"].concat([
          "--executor",
          "inline",
          "--preload",
          preload,
        ]),
        { stdio: ["ignore", "pipe", "pipe"], detached: true },
      );
      const exited = new Promise<number | null>((r) => nanny.once("exit", (code) => r(code)));
      const count = () => scheduler.state.workers.size;
      try {
        for (let i = 0; i < 600 && count() === 0; i++) await sleep(100);
        expect(count()).toBe(1);
        if (how === "Ctrl-C") {
          process.kill(-(nanny.pid as number), "SIGINT");
          expect(await exited).toBe(0);
        } else {
          nanny.kill("SIGKILL");
          // Its child hears its channel close and closes, with nobody left to read its lines.
        }
        for (let i = 0; i < 300; i++) {
          if (existsSync(marks) && readFileSync(marks, "utf8").includes("teardown-done")) break;
          await sleep(100);
        }
        expect(readFileSync(marks, "utf8")).toBe("setup\nteardown-start\nteardown-done\n");
      } finally {
        try {
          process.kill(-(nanny.pid as number), "SIGKILL");
        } catch {
          // gone already
        }
        await scheduler.close();
      }
    }, 120_000);
  }

  for (const c of [
    {
      how: "an abandoned task's timer keeps its process alive",
      task: "new Promise((resolve) => setTimeout(resolve, 60_000))",
      withinMs: 5_000,
    },
    {
      how: "a synchronous task blocks its event loop",
      // Held in Atomics.wait, as a busy loop would hold it but without a core: spinning
      // until the kill, 12 s and more, was a third of this file's CPU, slowing the files beside.
      task: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)",
      withinMs: NANNY_GONE_EXIT_MS + 5_000,
    },
  ]) {
    it.concurrent(`a worker whose nanny is killed while ${c.how} is gone within ${c.withinMs / 1000} s`, async () => {
      const name = c.how.includes("timer") ? "orphan-timer" : "orphan-spin";
      const pidFile = join(dir, `${name}.pid`);
      const tasks = join(dir, `${name}.mjs`);
      writeFileSync(
        tasks,
        `import { writeFileSync } from "node:fs";\nimport { defineTask } from ${JSON.stringify(registry)};\n` +
          `defineTask("orphan.hold", () => { writeFileSync(${JSON.stringify(pidFile)}, \`\${process.pid}\\n\`); return ${c.task}; });\n`,
      );
      const scheduler = await quietScheduler();
      const nanny = spawn(
        process.execPath,
        [WEFT_BIN, "worker", scheduler.address, "--nanny", "--nthreads", "1"].concat([
          "--executor",
          "inline",
          "--tasks",
          tasks,
        ]),
        // Its stderr (with the worker's lines it forwarded while alive; the worker's after the kill
        // reach nobody) is shown if the bound is missed.
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      nanny.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const client = await Client.connect(scheduler.address);
      let pid = 0;
      try {
        await client.waitForWorkers(1, { timeoutMs: 60_000 });
        void client
          .submit("orphan.hold")
          .result()
          .catch(() => {});
        // Before, the file was read as soon as it existed: empty now and then on a loaded
        // host (its writer preempted between its open and its write), pid 0, which names
        // the test's own process group, "running" for the whole 40 s.
        pid = await writtenPid(pidFile, 30_000, "the task's start");
        await sleep(200);
        nanny.kill("SIGKILL");
        const killedAt = Date.now();
        while (running(pid) && Date.now() - killedAt < 40_000) await sleep(50);
        const goneAfterMs = Date.now() - killedAt;
        // Before, it lived until its task ended, 60 s after it began.
        expect(running(pid), `still running 40 s after its nanny's kill; stderr:\n${stderr}`).toBe(
          false,
        );
        expect(
          goneAfterMs,
          `gone ${goneAfterMs} ms after its nanny's kill; stderr:\n${stderr}`,
        ).toBeLessThan(c.withinMs);
      } finally {
        nanny.kill("SIGKILL");
        if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
        await client.close();
        await scheduler.close();
      }
    }, 120_000);
  }

  it("a worker whose nanny is killed closes too", async () => {
    const scheduler = await quietScheduler();
    const nanny = spawn(
      process.execPath,
      [WEFT_BIN, "worker", scheduler.address, "--nanny", "--nthreads", "1", "--executor", "inline"],
      { stdio: "ignore" },
    );
    const count = () => scheduler.state.workers.size;
    try {
      for (let i = 0; i < 600 && count() === 0; i++) await sleep(100);
      expect(count()).toBe(1);
      nanny.kill("SIGKILL");
      // Its child hears its channel close, closes, and the scheduler sees it leave.
      for (let i = 0; i < 300 && count() > 0; i++) await sleep(100);
      expect(count()).toBe(0);
    } finally {
      nanny.kill("SIGKILL");
      await scheduler.close();
    }
  }, 120_000);
});
