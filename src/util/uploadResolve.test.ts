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

describe("the resolution of an uploaded module's imports", () => {
  hooks.initialize({ fallbacks: ["file:///home/u/proj/"], entries: { weft: RUNNING } });

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

  it("leaves weft to Node.js for a module not uploaded, and other packages to it and the fallbacks", async () => {
    const project = "file:///home/u/proj/tasks.mjs";
    expect((await hooks.resolve("weft", { parentURL: project }, nodeResolve)).url).toBe(
      PROJECT_COPY,
    );
    const uploaded = "file:///tmp/weft-uploads-12-host-Ab3/tasks.mjs";
    expect((await hooks.resolve("yaml", { parentURL: uploaded }, nodeResolve)).url).toBe(
      "file:///home/u/proj/node_modules/yaml/index.js",
    );
    await expect(
      hooks.resolve("weft-extras", { parentURL: uploaded }, nodeResolve),
    ).rejects.toThrow("Cannot find package 'weft-extras'");
  });
});
