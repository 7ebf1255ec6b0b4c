import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { StartWatch } from "./startWatch.ts";

const LOCAL_CLUSTER = new URL("../client/localCluster.ts", import.meta.url).href;

const dir = mkdtempSync(join(tmpdir(), "weft-start-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("StartWatch", () => {
  it("warns once, naming the step the start is in, when it runs past its time", async () => {
    const { logger, records } = memoryLogger();
    const watch = new StartWatch("scheduler", logger, 20);
    watch.doing = "running its preload modules' weftSetup (file:///stuck.mjs)";
    await new Promise((resolve) => setTimeout(resolve, 80));
    watch.clear();
    expect(records.map((r) => r.msg)).toEqual([
      "the scheduler has not started after 0.02 s: it is still running its preload modules' weftSetup (file:///stuck.mjs), and its start waits for it",
    ]);
  });

  it("leaves a step that logs its own wait be, and gives the step after it a whole time more", async () => {
    const { logger, records } = memoryLogger();
    const watch = new StartWatch("worker", logger, 40);
    watch.enterLoggingItsOwnWait("registering with the scheduler at tcp://127.0.0.1:1");
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(records).toEqual([]);
    watch.doing = 'setting up the cluster\'s worker plugin "stuck"';
    await new Promise((resolve) => setTimeout(resolve, 15));
    expect(records).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    watch.clear();
    expect(records.map((r) => r.msg)).toEqual([
      expect.stringMatching(
        /^the worker has not started after 0\.\d s: it is still setting up the cluster's worker plugin "stuck", and its start waits for it$/,
      ),
    ]);
  });

  it("says nothing for a start over in time", async () => {
    const { logger, records } = memoryLogger();
    const watch = new StartWatch("scheduler", logger, 20);
    watch.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(records).toEqual([]);
  });

  it("fails a LocalCluster whose scheduler preload's weftSetup waits on nothing, and tears it down, where Node.js exited 13 without a word", () => {
    const preload = join(dir, "stuck.mjs");
    writeFileSync(
      preload,
      "export function weftSetup() { return new Promise(() => {}); }\n" +
        'export function weftTeardown() { process.stdout.write("torn down\\n"); }\n',
    );
    const program = join(dir, "program.mts");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `await LocalCluster.start({ workers: 1, executor: "inline", scheduler: { preload: [${JSON.stringify(preload)}] } });\n`,
    );
    const run = spawnSync(process.execPath, ["--import", "tsx", program], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, WEFT_LOG_LEVEL: "silent" },
    });
    expect(run.stderr).toMatch(
      /the scheduler's start can never finish: nothing was left to run while it was still running its preload modules' weftSetup \(file:\/\/.*stuck\.mjs\)/,
    );
    expect(run.stdout).toBe("torn down\n");
    expect(run.status).toBe(1);
  }, 40_000);
});
