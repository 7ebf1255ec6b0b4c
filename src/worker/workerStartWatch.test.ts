import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it, vi } from "vitest";
import { weftModuleUrl } from "../cli/testBuiltCommand.ts";
import { Client } from "../client/client.ts";
import { setDialer } from "../comm/connect.ts";
import { ConnectError } from "../comm/errors.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { SLOW_START_WARNING_MS } from "../util/startWatch.ts";
import { programFile, runTsxProgram } from "../util/testTsxProgram.ts";
import { memoryLogger } from "./testWorker.ts";
import { Worker } from "./worker.ts";

// The build's when tests run it, for the programs and `weft` processes this file starts.
const LOCAL_CLUSTER = weftModuleUrl("client/localCluster.ts");
const TASK_REGISTRY = weftModuleUrl("worker/taskRegistry.ts");
/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "weft-worker-start-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A task module defining a worker plugin whose setup never ends: one file a test, as they run side by side. */
function stuckPluginModule(test: string): string {
  const file = join(dir, `stuck-plugin-${test}.mjs`);
  writeFileSync(
    file,
    `import { defineTask } from ${JSON.stringify(TASK_REGISTRY)};\n` +
      `defineTask("startWatch.stuckPlugin", () => ({ setup: () => new Promise(() => {}) }));\n`,
  );
  return file;
}

describe("a worker's start watched, as the scheduler's", () => {
  // First and alone: it sets this process's dialer and fakes its timers, which the
  // client of the concurrent tests after it must not meet.
  it("says within 10 s that it waits, in a worker whose connection to the scheduler has no answer, where it said nothing until the try's timeout (30 s)", async () => {
    const { logger, records } = memoryLogger();
    const address = "tcp://192.0.2.1:8786"; // dialled by the stand-in below only
    const dropped = new AbortController();
    // Its packets dropped: the try ends at its timeout.
    setDialer((_, o) =>
      sleep(o.timeoutMs as number, undefined, { signal: dropped.signal }).then(() => {
        throw new ConnectError(`timed out connecting to ${address}`, address, "ETIMEDOUT");
      }),
    );
    const worker = new Worker({
      scheduler: address,
      listen: "inproc://",
      nthreads: 1,
      executor: "inline",
      logger,
    });
    // The two 10 s clocks (the start watch's, the registration's) run on fake time: the
    // try's dial is real time's (node:timers/promises), and never ends on its own here.
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"],
    });
    try {
      const starting = worker.start().catch(() => {});
      await vi.advanceTimersByTimeAsync(SLOW_START_WARNING_MS + 1_000);
      // The registration says it waits (its start watch leaves it to): once, so far.
      expect(records.map((r) => String(r.msg)).filter((m) => m.includes(address))).toEqual([
        `still waiting for the scheduler at ${address}: a connection to it has had no answer for 10 s`,
      ]);
      await worker.close(0);
      await starting;
    } finally {
      vi.useRealTimers();
      setDialer(null);
      dropped.abort();
    }
  }, 30_000);

  it.concurrent("fails a LocalCluster worker whose cluster plugin's setup waits on nothing, naming the step, where Node.js exited 13 without a word", async () => {
    const tasks = stuckPluginModule("local-cluster");
    const program = programFile(dir, "program");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `const cluster = await LocalCluster.start({ workers: 0, executor: "inline", taskModules: [${JSON.stringify(tasks)}] });\n` +
        `const client = await cluster.client();\n` +
        `await client.registerWorkerPlugin("startWatch.stuckPlugin", { name: "stuck" });\n` +
        `await cluster.scale(1);\n`,
    );
    const run = await runTsxProgram(program, "silent");
    expect(run.stderr).toContain(
      `scale: a worker failed to start: the worker's start can never finish: nothing was left to run while it was still setting up the cluster's worker plugin "stuck"`,
    );
    expect(run.status).toBe(1);
  }, 70_000);

  it.concurrent("closes such a worker without waiting its close's timeout on the setup that can never end, awaiting the teardowns of the plugins set up", async () => {
    const tasks = join(dir, "stuck-and-set-up-plugins.mjs");
    writeFileSync(
      tasks,
      `import { defineTask } from ${JSON.stringify(TASK_REGISTRY)};\n` +
        `defineTask("startWatch.setUpPlugin", () => ({ teardown: () => new Promise((r) => setTimeout(() => { process.stdout.write("set-up torn down\\n"); r(); }, 300)) }));\n` +
        `defineTask("startWatch.stuckPlugin", () => ({ setup: () => new Promise(() => {}), teardown: () => { process.stdout.write("stuck torn down\\n"); } }));\n`,
    );
    const program = programFile(dir, "closed-program");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `const cluster = await LocalCluster.start({ workers: 0, executor: "inline", taskModules: [${JSON.stringify(tasks)}] });\n` +
        `const client = await cluster.client();\n` +
        `await client.registerWorkerPlugin("startWatch.setUpPlugin", { name: "set-up" });\n` +
        `await client.registerWorkerPlugin("startWatch.stuckPlugin", { name: "stuck" });\n` +
        `const t0 = performance.now();\n` +
        `await cluster.scale(1).catch((err) => process.stdout.write(\`\${err.message} after \${Math.round(performance.now() - t0)} ms\\n\`));\n`,
    );
    const run = await runTsxProgram(program, "warn");
    const lines = run.stdout.trim().split("\n");
    // Each plugin torn down, the set-up one's teardown awaited, in the order set up.
    expect(lines.slice(0, 2)).toEqual(["set-up torn down", "stuck torn down"]);
    expect(lines[2]).toMatch(
      /^scale: a worker failed to start: the worker's start can never finish: nothing was left to run while it was still setting up the cluster's worker plugin "stuck" after \d+ ms$/,
    );
    // Before, the close waited its whole timeout (30 s) on the setup, then not on the teardown.
    expect(Number(/after (\d+) ms/.exec(lines[2])?.[1])).toBeLessThan(10_000);
    expect(run.stderr).not.toContain("did not finish within the close's timeout");
    expect(run.status).toBe(0);
  }, 70_000);

  it.concurrent("warns, in a weft worker whose start waits on a plugin's setup that never ends, naming the step, where it hung without a word", async () => {
    const tasks = stuckPluginModule("weft-worker");
    const scheduler = await new Scheduler({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    }).listen();
    const client = await Client.connect(scheduler.address, { printTaskOutput: false });
    const child = spawn(
      process.execPath,
      [WEFT_BIN, "worker", scheduler.address, "--tasks", tasks, "--executor", "inline"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      // No worker has it yet: it is recorded, for the worker to set up as it registers.
      await client.registerWorkerPlugin("startWatch.stuckPlugin", { name: "stuck" });
      let output = "";
      const warned = new Promise<void>((resolve) => {
        const hear = (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes("has not started after")) resolve();
        };
        child.stdout.on("data", hear);
        child.stderr.on("data", hear);
      });
      await Promise.race([
        warned,
        new Promise((r) => setTimeout(r, SLOW_START_WARNING_MS + 15_000)),
      ]);
      expect(output).toContain(
        `the worker has not started after 10 s: it is still setting up the cluster's worker plugin \\"stuck\\", and its start waits for it`,
      );
    } finally {
      child.kill("SIGKILL");
      await client.close();
      await scheduler.close();
    }
  }, 40_000);
});
