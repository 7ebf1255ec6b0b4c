import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);

const IMPORT_MODULE = new URL("./importModule.ts", import.meta.url).href;
/** The client's entry point in the sources, which `weft` is to a process running them. */
const CLIENT_SOURCES = new URL("../client/index.ts", import.meta.url).href;
const WORKER_SOURCES = new URL("../worker/index.ts", import.meta.url).href;
const TSX = new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url).href;

let dir = "";
afterEach(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
  dir = "";
});

/**
 * A project with its own `weft` (another copy, a stand-in exporting `copy`) and
 * a task module of it importing `weft` and `weft/worker`.
 */
function projectWithOwnWeft(): string {
  dir = mkdtempSync(join(tmpdir(), "weft-own-copy-"));
  const own = join(dir, "node_modules", "weft");
  mkdirSync(own, { recursive: true });
  writeFileSync(
    join(own, "package.json"),
    JSON.stringify({
      name: "weft",
      type: "module",
      exports: { ".": "./index.js", "./worker": "./index.js" },
    }),
  );
  writeFileSync(join(own, "index.js"), 'export const copy = "the project\'s own";\n');
  const tasks = join(dir, "tasks.mjs");
  writeFileSync(
    tasks,
    'import * as weft from "weft";\nimport * as worker from "weft/worker";\nexport { weft, worker };\n',
  );
  return tasks;
}

describe("importModule of a module importing weft, beside another copy of weft", () => {
  it("gives it the running weft, not the copy Node.js finds beside it", async () => {
    // As weft worker --tasks ./tasks.mjs does on its main thread (the inline executor,
    // a nanny, weft scheduler --tasks, weft run's graph module), in a process of its
    // own: vitest's loader is not Node.js's, whose resolution hooks are at stake.
    // Before, the module got the project's own copy, whose wait() refused the futures
    // of the worker's client ('wait: item 0 is not a Future').
    const tasks = projectWithOwnWeft();
    const script = `
      const { importModule } = await import(${JSON.stringify(IMPORT_MODULE)});
      const running = await import(${JSON.stringify(CLIENT_SOURCES)});
      const runningWorker = await import(${JSON.stringify(WORKER_SOURCES)});
      const mod = await importModule(${JSON.stringify(pathToFileURL(tasks).href)});
      console.log(JSON.stringify({
        weft: mod.weft.Future === running.Future ? "running" : (mod.weft.copy ?? "another"),
        worker: mod.worker.Worker === runningWorker.Worker ? "running" : (mod.worker.copy ?? "another"),
      }));
    `;
    const { stdout } = await run(
      process.execPath,
      ["--import", TSX, "--input-type=module", "-e", script],
      { cwd: dir },
    );
    expect(JSON.parse(stdout)).toEqual({ weft: "running", worker: "running" });
  });
});
