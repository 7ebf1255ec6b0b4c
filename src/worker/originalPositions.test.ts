import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { runInThisContext } from "node:vm";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import {
  isOriginalPositions,
  originalPositionsExpression,
  type ScriptPosition,
} from "./originalPositions.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-positions-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A module on one line, as tsx makes of TypeScript, with its source map
 * inline: its one mapping (`oBAYS`) puts generated column 20 at line 12,
 * column 9 (0-based) of `file:///src/tasks.ts`. Its URL.
 */
function oneLineModule(): string {
  const map = { version: 3, sources: ["file:///src/tasks.ts"], names: [], mappings: "oBAYS" };
  const file = join(dir, "mapped.mjs");
  writeFileSync(
    file,
    "export function f() { return 1; } export function g() { return 2; }\n" +
      `//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString("base64")}\n`,
  );
  return pathToFileURL(file).href;
}

/**
 * In a thread of its own that registered tsx (which turns source maps on, as
 * in a pool thread importing TypeScript) and imported `fixture`: what
 * `originalPositions` gives for `positions`, called directly and through
 * the expression the inspector evaluates.
 */
function inThread(
  fixture: string,
  positions: ScriptPosition[],
): Promise<{ direct: unknown; evaluated: unknown }> {
  const code = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => {
      const { register } = await import("tsx/esm/api");
      register();
      const m = await import(workerData.module);
      await import(workerData.fixture);
      m.exposeOriginalPositions();
      parentPort.postMessage({
        direct: m.originalPositions(workerData.positions),
        evaluated: require("node:vm").runInThisContext(m.originalPositionsExpression(workerData.positions)),
      });
    })();`;
  const module = new URL("./originalPositions.ts", import.meta.url).href;
  const w = new Worker(code, { eval: true, workerData: { module, fixture, positions } });
  return new Promise((resolve, reject) => {
    w.once("message", (m) => {
      void w.terminate();
      resolve(m);
    });
    w.once("error", reject);
  });
}

describe("originalPositions", () => {
  it("places a position by its script's source map, and nothing the map does not place", async () => {
    const url = oneLineModule();
    const positions = [
      { url, line: 0, column: 25 },
      // Before the line's first mapping.
      { url, line: 0, column: 5 },
      // A line without a mapping of its own (findEntry would give line 0's).
      { url, line: 1, column: 5 },
      { url: "node:internal/modules/run_main", line: 0, column: 0 },
      { url: "", line: 0, column: 0 },
      { url: pathToFileURL(join(dir, "never-loaded.mjs")).href, line: 0, column: 0 },
    ];
    const got = await inThread(url, positions);
    const expected = [
      { url: "file:///src/tasks.ts", line: 12, column: 9 },
      null,
      null,
      null,
      null,
      null,
    ];
    expect(got.direct).toEqual(expected);
    expect(got.evaluated).toEqual(expected);
  });

  it("the inspector's expression throws in a thread that did not expose them", () => {
    expect(() => runInThisContext(originalPositionsExpression([]))).toThrow(TypeError);
  });

  it("what a thread answers is checked: one position or null per position asked", () => {
    const p = { url: "file:///a.ts", line: 3, column: 0 };
    expect(isOriginalPositions([p, null], 2)).toBe(true);
    expect(isOriginalPositions([p], 2)).toBe(false);
    expect(isOriginalPositions([{ ...p, line: -1 }], 1)).toBe(false);
    expect(isOriginalPositions([{ ...p, url: 1 }], 1)).toBe(false);
    expect(isOriginalPositions("[]", 0)).toBe(false);
  });
});
