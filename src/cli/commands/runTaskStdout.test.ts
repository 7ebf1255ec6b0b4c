/** `weft run`'s stdout holds its answer alone: what tasks and graph modules write there goes to stderr. */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, expect, it } from "vitest";
import { weftModuleUrl } from "../testBuiltCommand.ts";
import { Sink, testContext } from "../testContext.ts";
import { weftProcess } from "../testWeftProcess.ts";
import { runGraph } from "./runAction.ts";

const WEFT_INDEX = new URL("../../client/index.ts", import.meta.url).href;
/** The same, for a graph module a `weft` process of the test's own imports. */
const PROCESS_WEFT_INDEX = weftModuleUrl("client/index.ts");
const dir = mkdtempSync(join(tmpdir(), "weft-run-stdout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A graph module that writes to stdout as it loads and whose task does, by
 * `console.log` and by a write of its own: a user's debugging lines. It imports
 * weft by `index`.
 */
function chattyModule(name: string, index: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `import { defineTask } from ${JSON.stringify(index)};\n` +
      `process.stdout.write("graph module loaded\\n");\n` +
      `export const chatty = defineTask("chatty", (x) => {\n` +
      `  console.log("task says", x);\n` +
      `  process.stdout.write("task wrote\\n");\n` +
      `  return x * 2;\n` +
      `});\n` +
      `export const graph = { a: ["chatty", 21] };\n`,
  );
  return file;
}

it("inline: what a task and the graph module write to stdout goes to stderr, the answer alone to stdout", async () => {
  const ctx = testContext();
  await runGraph(
    chattyModule("inline.mjs", WEFT_INDEX),
    { tasks: [], upload: [], key: [], progress: false, logLevel: "error", executor: "inline" },
    ctx,
  );
  expect(ctx.exitCode).toBe(0);
  expect(JSON.parse(ctx.stdout.text)).toEqual({ a: 42 });
  expect(ctx.stderr.text).toContain("graph module loaded\n");
  // vitest takes console.log over in its forks: a process of its own shows it (below).
  expect(ctx.stderr.text).toContain("task wrote\n");
});

it("pool threads, in a process of its own: `weft run g.mjs > out.json` leaves JSON in out.json", async () => {
  // A pool thread's stdout is piped into the process's by Node.js: only a process of
  // its own shows where it lands.
  const { code, out, err } = await weftProcess([
    "run",
    chattyModule("threads.mjs", PROCESS_WEFT_INDEX),
    "--no-progress",
  ]);
  expect({ code, out }).toEqual({ code: 0, out: `${JSON.stringify({ a: 42 }, null, 2)}\n` });
  // The main thread's import and each pool thread's.
  expect(err).toContain("graph module loaded\n");
  expect(err).toContain("task says 21\n");
  expect(err).toContain("task wrote\n");
}, 60_000);

it("a line written once the answer is out (an inline task's timer, the graph module's) goes to stderr, not after the JSON", async () => {
  const file = join(dir, "late.mjs");
  writeFileSync(
    file,
    `import { defineTask } from ${JSON.stringify(PROCESS_WEFT_INDEX)};\n` +
      `defineTask("later", (x) => { setTimeout(() => console.log("task timer"), 300); return x; });\n` +
      `setTimeout(() => process.stdout.write("module timer\\n"), 300);\n` +
      `export const graph = { a: ["later", 1] };\n`,
  );
  const { code, out, err } = await weftProcess([
    "run",
    file,
    "--no-progress",
    "--executor",
    "inline",
  ]);
  expect({ code, out }).toEqual({ code: 0, out: `${JSON.stringify({ a: 1 }, null, 2)}\n` });
  expect(err).toContain("task timer\n");
  expect(err).toContain("module timer\n");
}, 60_000);

/** A stderr whose reader lags, taking a write a millisecond: the most ever waiting in it is kept. */
class LaggingStderr extends Writable {
  text = "";
  most = 0;
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.most = Math.max(this.most, this.writableLength);
    this.text += chunk.toString();
    setTimeout(done, 1);
  }
}

/**
 * A graph module whose task (`name`: one process defines a task name once) writes
 * `mb` MB to stdout, waiting for `drain` as a careful writer does.
 */
function spewModule(name: string, mb: number): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import { defineTask } from ${JSON.stringify(WEFT_INDEX)};\n` +
      `export const spew = defineTask(${JSON.stringify(name)}, async (mb) => {\n` +
      `  for (let i = 0; i < mb * 16; i++) {\n` +
      `    const line = \`\${i} \${"x".repeat(65530)}\\n\`;\n` +
      `    if (!process.stdout.write(line)) await new Promise((r) => process.stdout.once("drain", r));\n` +
      `  }\n` +
      `  return mb;\n` +
      `});\n` +
      `export const graph = { a: [${JSON.stringify(name)}, ${mb}] };\n`,
  );
  return file;
}

for (const executor of ["inline", "threads"] as const) {
  it(`${executor}: a task's stdout diverted to a stderr read slowly waits for it, rather than piling up in memory`, async () => {
    const stderr = new LaggingStderr();
    const ctx = { stdout: new Sink(), stderr, exitCode: 0 };
    await runGraph(
      spewModule(`spew_${executor}`, 2),
      {
        tasks: [],
        upload: [],
        key: [],
        progress: false,
        logLevel: "error",
        executor,
        workers: "1",
      },
      ctx,
    );
    expect({ code: ctx.exitCode, out: ctx.stdout.text }).toEqual({
      code: 0,
      out: `${JSON.stringify({ a: 2 }, null, 2)}\n`,
    });
    // Before, the task's writes were all taken at once: 2 MB waited in stderr.
    expect(stderr.most).toBeLessThan(256 * 1024);
    const lines = stderr.text.split("\n").filter((l) => /^\d+ x/.test(l));
    expect(lines.map((l) => Number(l.split(" ")[0]))).toEqual([...Array(32).keys()]);
  }, 60_000);
}
