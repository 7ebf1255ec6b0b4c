/**
 * A graph module whose import or graph can never settle: `weft run` says so, where
 * Node.js ended it with exit code 13 (an unsettled top-level await) and no word.
 * In processes of their own: only there does Node.js find nothing left to run, or
 * end the process on a promise rejected unhandled as the module loads.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { weftProcess } from "../testWeftProcess.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-graph-never-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `weft run` of a module holding `source`: its exit code and stderr. */
async function runModule(name: string, source: string): Promise<{ code: unknown; err: string }> {
  const file = join(dir, name);
  writeFileSync(file, source);
  const { code, err } = await weftProcess(["run", file, "--no-progress"]);
  return { code, err: err.replace(file, name) };
}

it("a graph module whose top-level await never settles is exit 2, saying so", async () => {
  const r = await runModule(
    "stuck.mjs",
    "await new Promise(() => {});\nexport const graph = { a: 1 };\n",
  );
  expect(r).toEqual({
    code: 2,
    err: "weft run: stuck.mjs: cannot import: its import never finished: a top-level await waits on what nothing is left to settle\n",
  });
}, 60_000);

it("a graph function, or an exported promise, that never settles is exit 2, saying so", async () => {
  const fn = await runModule("never.mjs", "export const graph = () => new Promise(() => {});\n");
  expect(fn).toEqual({
    code: 2,
    err: "weft run: never.mjs: its graph never came: the promise it gave waits on what nothing is left to settle\n",
  });
  const exported = await runModule("pending.mjs", "export const graph = new Promise(() => {});\n");
  expect(exported).toEqual({
    code: 2,
    err: "weft run: pending.mjs: its graph never came: the promise it gave waits on what nothing is left to settle\n",
  });
}, 60_000);

it("a promise rejected unhandled while the module loads, the graph's or another, is exit 2, saying so", async () => {
  // Nothing can handle the graph's before the import ends: Node.js ended the process
  // with the error's stack and exit code 1, as if a task had failed.
  const graph = await runModule(
    "rejects.mjs",
    "export const graph = (async () => { await new Promise((r) => setTimeout(r, 20)); throw new Error('no data'); })();\n" +
      "await new Promise((r) => setTimeout(r, 200));\n",
  );
  expect(graph).toEqual({
    code: 2,
    err: "weft run: rejects.mjs: its graph promise rejected: no data\n",
  });
  const stray = await runModule(
    "stray.mjs",
    "Promise.reject(new Error('stray'));\nexport const graph = { a: 1 };\nawait new Promise((r) => setTimeout(r, 50));\n",
  );
  expect(stray).toEqual({
    code: 2,
    err: "weft run: stray.mjs: cannot import: a promise it made rejected, and nothing handled it: stray\n",
  });
}, 60_000);
