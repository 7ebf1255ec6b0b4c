/**
 * The README's example of driving the worker state machine by hand runs as printed,
 * against the build of its entry point (`weft/worker/state`), and says what its
 * comments say it says.
 */

import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));

/** The first `ts` code block after the heading `heading` of the README. */
function exampleAfter(heading: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const at = readme.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`README.md has no section "${heading}"`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (block === null) throw new Error(`README.md's "${heading}" has no ts example`);
  return block[1];
}

it("the example of driving the worker state machine by hand runs as printed", async () => {
  const entry = join(root, "dist/worker/state/index.js");
  if (!existsSync(entry)) throw new Error("no build in dist/: run `npm run build` first");
  const example = exampleAfter("Driving the worker state machine by hand");
  expect(example).toContain('from "weft/worker/state"');
  const dir = mkdtempSync(join(tmpdir(), "weft-readme-"));
  try {
    const file = join(dir, "example.ts");
    writeFileSync(
      file,
      example.replace(
        'from "weft/worker/state"',
        `from ${JSON.stringify(pathToFileURL(entry).href)}`,
      ),
    );
    const { stdout } = await run(process.execPath, ["--import", "tsx", file], { cwd: root });
    const lines = stdout.split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "fetch x from tcp://127.0.0.1:8002",
      "true",
      "true",
      "memory",
    ]);
    // ws.story("y"): y's records from compute-task to memory, with their stimulus ids.
    expect(stdout).toContain("'compute-y'");
    expect(stdout).toContain("'done-y'");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
