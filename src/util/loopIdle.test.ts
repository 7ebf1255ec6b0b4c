import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { rejectWhenIdle } from "./loopIdle.ts";

const LOCAL_CLUSTER = new URL("../client/localCluster.ts", import.meta.url).href;
const TASK_REGISTRY = new URL("../worker/taskRegistry.ts", import.meta.url).href;

describe("rejectWhenIdle", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-loop-idle-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("stops waiting without rejecting, and leaves no listener behind", async () => {
    const before = process.listenerCount("beforeExit");
    const idle = rejectWhenIdle(() => new Error("idle"));
    const other = rejectWhenIdle(() => new Error("idle too"));
    expect(process.listenerCount("beforeExit")).toBe(before + 1);
    idle.stop();
    other.stop();
    expect(process.listenerCount("beforeExit")).toBe(before);
    const settled = await Promise.race([
      idle.promise.then(() => "settled"),
      new Promise((resolve) => setTimeout(() => resolve("pending"), 10)),
    ]);
    expect(settled).toBe("pending");
  });

  it("fails an inline cluster whose task module is the program waiting for it, where Node.js exited 13", () => {
    // A one-file program: its tasks beside the code starting its cluster, which
    // its inline worker imports while the program's top-level await waits.
    const program = join(dir, "program.mts");
    writeFileSync(
      program,
      `import { defineTask } from ${JSON.stringify(TASK_REGISTRY)};\n` +
        `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `defineTask("loopIdle.square", (x) => x * x);\n` +
        'const cluster = await LocalCluster.start({ workers: 1, executor: "inline", taskModules: [import.meta.url] });\n' +
        "await cluster.close();\n",
    );
    const run = spawnSync(process.execPath, ["--import", "tsx", program], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, WEFT_LOG_LEVEL: "silent" },
    });
    expect(run.stderr).toMatch(/its import never finished: nothing was left to run/);
    expect(run.status).toBe(1);
  }, 40_000);

  it("fails a cluster whose worker preload's weftSetup waits on nothing, tearing it down, where Node.js exited 13 without a word", () => {
    const preload = join(dir, "stuck.mjs");
    writeFileSync(
      preload,
      "export function weftSetup() { return new Promise(() => {}); }\n" +
        'export function weftTeardown() { process.stdout.write("torn down\\n"); }\n',
    );
    const program = join(dir, "stuckPreload.mts");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `await LocalCluster.start({ workers: 1, executor: "inline", worker: { preload: [${JSON.stringify(preload)}] } });\n`,
    );
    const run = spawnSync(process.execPath, ["--import", "tsx", program], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, WEFT_LOG_LEVEL: "silent" },
    });
    expect(run.stderr).toMatch(
      /LocalCluster: a worker failed to start: the worker's start can never finish: nothing was left to run while it was still running its preload modules' weftSetup \(file:\/\/.*stuck\.mjs\)/,
    );
    expect(run.stdout).toBe("torn down\n");
    expect(run.status).toBe(1);
  }, 40_000);
});
