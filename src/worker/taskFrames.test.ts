import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { frameLocations, withoutRunnerFrames } from "./taskFrames.ts";

describe("frameLocations with source maps enabled", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-task-frames-"));
  const sourcesWere = process.sourceMapsEnabled;
  afterAll(() => {
    process.setSourceMapsEnabled(sourcesWere);
    rmSync(dir, { recursive: true, force: true });
  });

  it("names a module also by the source its map gives, as the stacks then do", async () => {
    // A built module and its map, as the package's dist/worker/runTask.js and
    // runTask.js.map (whose source is src/worker/runTask.ts).
    const built = join(dir, "runner.cjs");
    const source = join(dir, "runner.ts");
    writeFileSync(
      built,
      "exports.where = () => new Error('x').stack;\n//# sourceMappingURL=runner.cjs.map\n",
    );
    writeFileSync(
      `${built}.map`,
      JSON.stringify({
        version: 3,
        file: "runner.cjs",
        sources: ["runner.ts"],
        names: [],
        mappings: "AAAA",
      }),
    );
    process.setSourceMapsEnabled(true);
    const url = pathToFileURL(built).href;
    // Loaded by Node itself, which reads the map (vitest's import would
    // transform the module instead).
    createRequire(import.meta.url)(built);

    const runner = frameLocations([url]);
    expect(runner).toContain(`${source}:`);
    const stack = [
      "Error: boom",
      "    at task (file:///srv/tasks.mjs:2:9)",
      `    at startTask (${source}:181:13)`,
      "    at async onMessage (/srv/node_modules/piscina/src/worker.ts:184:18)",
    ].join("\n");
    expect(withoutRunnerFrames(stack, runner)).toBe(
      "Error: boom\n    at task (file:///srv/tasks.mjs:2:9)",
    );
  });
});
