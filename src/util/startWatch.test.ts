import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { weftModuleUrl } from "../cli/testBuiltCommand.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { SLOW_START_WARNING_MS, StartWatch } from "./startWatch.ts";
import { programArgs, programFile, runTsxProgram } from "./testTsxProgram.ts";

/** The build's when current: the programs then run without tsx, 1.5 s of CPU less each. */
const LOCAL_CLUSTER = weftModuleUrl("client/localCluster.ts");

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

  // The three below run side by side: each waits on processes of its own.
  it.concurrent("fails a LocalCluster whose scheduler preload's weftSetup waits on nothing, and tears it down, where Node.js exited 13 without a word", async () => {
    const preload = join(dir, "stuck.mjs");
    writeFileSync(
      preload,
      "export function weftSetup() { return new Promise(() => {}); }\n" +
        'export function weftTeardown() { process.stdout.write("torn down\\n"); }\n',
    );
    const program = programFile(dir, "program");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `await LocalCluster.start({ workers: 1, executor: "inline", scheduler: { preload: [${JSON.stringify(preload)}] } });\n`,
    );
    const run = await runTsxProgram(program, "silent", 30_000);
    expect(run.stderr).toMatch(
      /the scheduler's start can never finish: nothing was left to run while it was still running its preload modules' weftSetup \(file:\/\/.*stuck\.mjs\)/,
    );
    expect(run.stdout).toBe("torn down\n");
    expect(run.status).toBe(1);
  }, 40_000);

  it.concurrent("closes such a scheduler without waiting its close's timeout on a plugin start that can never end, awaiting the close of the plugin started", async () => {
    const program = programFile(dir, "stuck-plugin-program");
    writeFileSync(
      program,
      `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
        `const started = { name: "started", close: () => new Promise((r) => setTimeout(() => { process.stdout.write("started closed\\n"); r(); }, 300)) };\n` +
        `const stuck = { name: "stuck", start: () => new Promise(() => {}), close: () => { process.stdout.write("stuck closed\\n"); } };\n` +
        `const t0 = performance.now();\n` +
        `await LocalCluster.start({ workers: 0, scheduler: { plugins: [started, stuck] } }).catch((err) => process.stdout.write(\`\${err.message} after \${Math.round(performance.now() - t0)} ms\\n\`));\n`,
    );
    const run = await runTsxProgram(program, "warn");
    const lines = run.stdout.trim().split("\n");
    // Each plugin closed, the started one's close awaited, in the order added.
    expect(lines.slice(0, 2)).toEqual(["started closed", "stuck closed"]);
    expect(lines[2]).toMatch(
      /^the scheduler's start can never finish: nothing was left to run while it was still running the start of its plugin stuck after \d+ ms$/,
    );
    // Before, the close waited its whole timeout (30 s) on the start, then not on the close.
    expect(Number(/after (\d+) ms/.exec(lines[2])?.[1])).toBeLessThan(10_000);
    expect(run.stderr).not.toContain("did not finish within the close's timeout");
    expect(run.status).toBe(0);
  }, 70_000);

  it.concurrent("warns of no start still running while a start that failed closes what it started", async () => {
    const slowClose = `{ name: "slow", close: () => new Promise((r) => setTimeout(() => { process.stdout.write("slow closed\\n"); r(); }, ${SLOW_START_WARNING_MS + 1_000})) }`;
    const failing = join(dir, "failing-setup.mjs");
    writeFileSync(failing, 'export function weftSetup() { throw new Error("no"); }\n');
    const programs = {
      // The start stalled: the watch failed it.
      stalled: `[${slowClose}, { name: "stuck", start: () => new Promise(() => {}) }] }`,
      // A step failed: the start closes what it started, then rethrows.
      failed: `[${slowClose}], preload: [${JSON.stringify(failing)}] }`,
    };
    const runs = Object.entries(programs).map(([name, scheduler]) => {
      const program = programFile(dir, `closing-${name}`);
      writeFileSync(
        program,
        `import { LocalCluster } from ${JSON.stringify(LOCAL_CLUSTER)};\n` +
          `await LocalCluster.start({ workers: 0, scheduler: { plugins: ${scheduler} }).catch((err) => process.stdout.write(\`failed: \${err.message}\\n\`));\n`,
      );
      const child = spawn(process.execPath, programArgs(program), {
        env: { ...process.env, WEFT_LOG_LEVEL: "warn" },
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      return new Promise<string>((resolve) => child.on("close", () => resolve(output)));
    });
    for (const output of await Promise.all(runs)) {
      expect(output).toMatch(/^slow closed\nfailed: /m);
      // Before, the start's warning came during that close, 10 s after the start began.
      expect(output).not.toContain("has not started after");
    }
  }, 40_000);
});
