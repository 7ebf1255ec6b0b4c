import { describe, expect, it } from "vitest";

/** The hooks of `uploadResolve.mjs` (plain JavaScript, untyped). */
interface Hooks {
  initialize(data: { fallbacks: string[]; entries: Record<string, string> }): void;
  resolve(
    specifier: string,
    context: { parentURL?: string },
    next: (specifier: string, context: { parentURL?: string }) => Promise<{ url: string }>,
  ): Promise<{ url: string }>;
}

const HOOKS_PATH = "./uploadResolve.mjs";
const hooks = (await import(/* @vite-ignore */ HOOKS_PATH)) as Hooks;

const RUNNING = "file:///opt/weft/dist/client/index.js";
const RUNNING_WORKER = "file:///opt/weft/dist/worker/index.js";
const PROJECT_COPY = "file:///home/u/proj/node_modules/weft/dist/client/index.js";

/**
 * Node.js's own resolution, standing in: a URL resolves to itself; `weft` and
 * `yaml` from a module under /home/u/proj (the project's node_modules) to the
 * project's copies, and from anywhere else to nothing.
 */
async function nodeResolve(
  specifier: string,
  context: { parentURL?: string },
): Promise<{ url: string }> {
  if (specifier.startsWith("file:")) return { url: specifier };
  if (context.parentURL?.startsWith("file:///home/u/proj/")) {
    if (specifier === "weft") return { url: PROJECT_COPY };
    if (specifier === "yaml") return { url: "file:///home/u/proj/node_modules/yaml/index.js" };
  }
  throw Object.assign(new Error(`Cannot find package '${specifier}'`), {
    code: "ERR_MODULE_NOT_FOUND",
  });
}

describe("the resolution of a user's modules' imports", () => {
  hooks.initialize({
    fallbacks: ["file:///home/u/proj/"],
    entries: { weft: RUNNING, "weft/worker": RUNNING_WORKER },
  });

  it("gives weft the running copy, also where Node.js would find another above the upload directory", async () => {
    // TMPDIR inside the project (TMPDIR=$PWD/tmp, as some CI runs set it): the upload
    // directory has the project's node_modules above it, whose weft Node.js found first,
    // another copy, whose wait() refused the futures of the task's getClient().
    for (const parentURL of [
      "file:///home/u/proj/tmp/weft-uploads-12-host-Ab3/tasks.mjs",
      "file:///tmp/weft-uploads-12-host-Ab3/tasks.mjs",
    ]) {
      expect((await hooks.resolve("weft", { parentURL }, nodeResolve)).url).toBe(RUNNING);
    }
  });

  it("gives weft the running copy to a module not uploaded, whose own node_modules has another", async () => {
    // A task module of a project with its own install, given to a weft worker installed
    // globally (--tasks): Node.js found the project's copy, whose wait() refused the
    // futures of the worker's client. So for the modules it imports, and for weft/… too.
    for (const parentURL of [
      "file:///home/u/proj/tasks.mjs",
      "file:///home/u/proj/node_modules/some-lib/index.js",
    ]) {
      expect((await hooks.resolve("weft", { parentURL }, nodeResolve)).url).toBe(RUNNING);
      expect((await hooks.resolve("weft/worker", { parentURL }, nodeResolve)).url).toBe(
        RUNNING_WORKER,
      );
    }
  });

  it("leaves other packages to Node.js, then for an uploaded module to the fallbacks", async () => {
    const project = "file:///home/u/proj/tasks.mjs";
    expect((await hooks.resolve("yaml", { parentURL: project }, nodeResolve)).url).toBe(
      "file:///home/u/proj/node_modules/yaml/index.js",
    );
    // Not weft: a package named like it is another package.
    await expect(hooks.resolve("weft-extras", { parentURL: project }, nodeResolve)).rejects.toThrow(
      "Cannot find package 'weft-extras'",
    );
    const uploaded = "file:///tmp/weft-uploads-12-host-Ab3/tasks.mjs";
    expect((await hooks.resolve("yaml", { parentURL: uploaded }, nodeResolve)).url).toBe(
      "file:///home/u/proj/node_modules/yaml/index.js",
    );
    await expect(
      hooks.resolve("weft-extras", { parentURL: uploaded }, nodeResolve),
    ).rejects.toThrow("Cannot find package 'weft-extras'");
    // The fallbacks are for uploaded modules only: a module elsewhere resolves as Node.js does.
    await expect(
      hooks.resolve("yaml", { parentURL: "file:///srv/other/tasks.mjs" }, nodeResolve),
    ).rejects.toThrow("Cannot find package 'yaml'");
  });
});
