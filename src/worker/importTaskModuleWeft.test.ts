import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { clusterScratch, testCluster } from "../client/testCluster.ts";

const REGISTRY = new URL("./taskRegistry.ts", import.meta.url).href;
/** The client's entry point in the sources, which the pool threads run here. */
const CLIENT_SOURCES = new URL("../client/index.ts", import.meta.url).href;

const scratch = clusterScratch("own-weft-test");

describe("a task module of a project with its own weft, on a thread pool", () => {
  it("gets the weft the worker's threads run, not the project's copy", async () => {
    // A weft worker installed globally given --tasks of a project with its own install:
    // each pool thread imports the module, and Node.js found the project's copy (here a
    // stand-in), whose wait() refused the futures of the thread's getClient().
    const own = join(scratch.dir, "node_modules", "weft");
    mkdirSync(own, { recursive: true });
    writeFileSync(
      join(own, "package.json"),
      JSON.stringify({ name: "weft", type: "module", exports: "./index.js" }),
    );
    writeFileSync(join(own, "index.js"), 'export const copy = "the project\'s own";\n');
    const tasks = join(scratch.dir, "tasks.mjs");
    writeFileSync(
      tasks,
      `import * as weft from "weft";
import { defineTask } from ${JSON.stringify(REGISTRY)};
defineTask("whichWeft", async () =>
  weft.Future === (await import(${JSON.stringify(CLIENT_SOURCES)})).Future ? "running" : (weft.copy ?? "another"));
`,
    );
    const { client } = await testCluster({
      workers: 1,
      threadsPerWorker: 2,
      executor: "threads",
      taskModules: [pathToFileURL(tasks).href],
    });
    const results = await client.gather(
      Array.from({ length: 4 }, () => client.submitWith({ pure: false }, "whichWeft")),
    );
    expect(results).toEqual(["running", "running", "running", "running"]);
  });
});
