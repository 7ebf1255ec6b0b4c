import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import {
  buildIsCurrent,
  builtTaskModule,
  RUN_BUILD_VARIABLE,
  weftModuleUrl,
} from "./testBuiltCommand.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A checkout's shape in a temporary directory: `files` (path → text), each at mtime `at[path]` s. */
function checkout(files: Record<string, string>, at: Record<string, number> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "weft-built-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    const t = at[path] ?? 1_000;
    utimesSync(join(root, path), t, t);
  }
  return root;
}

describe("buildIsCurrent", () => {
  const sources = { "src/cli/weft.ts": "", "src/util/a.ts": "", "src/util/a.test.ts": "" };
  const build = { "dist/cli/weft.js": "", "dist/util/a.js": "" };

  it("is true for a build newer than every source", () => {
    expect(buildIsCurrent(checkout({ ...sources, ...build }, { "dist/util/a.js": 1_001 }))).toBe(
      true,
    );
  });

  it("is false once a source is newer than the oldest file of the build", () => {
    const root = checkout(
      { ...sources, ...build },
      { "dist/cli/weft.js": 1_002, "src/util/a.ts": 1_001 },
    );
    expect(buildIsCurrent(root)).toBe(false);
    // A file new to src/ too: the build has nothing of it.
    const added = checkout(
      { ...sources, ...build, "src/util/b.ts": "" },
      { "src/util/b.ts": 1_001 },
    );
    expect(buildIsCurrent(added)).toBe(false);
  });

  it("leaves test files out, which the build leaves out", () => {
    const root = checkout({ ...sources, ...build }, { "src/util/a.test.ts": 5_000 });
    expect(buildIsCurrent(root)).toBe(true);
  });

  it("is false without a build", () => {
    expect(buildIsCurrent(checkout(sources))).toBe(false);
    expect(
      buildIsCurrent(checkout({ ...sources, "dist/util/a.js": "" }, { "dist/util/a.js": 2_000 })),
    ).toBe(false);
  });
});

describe("bin/weft.js", () => {
  it(`runs the sources in a checkout, the build with ${RUN_BUILD_VARIABLE}=1`, async () => {
    const say = (what: string) =>
      `export async function main() { console.log("${what}"); return 0; }\n`;
    const root = checkout({ "src/cli/weft.ts": say("sources"), "dist/cli/weft.js": say("build") });
    mkdirSync(join(root, "bin"));
    copyFileSync(join(ROOT, "bin", "weft.js"), join(root, "bin", "weft.js"));
    writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
    // tsx, which the sources are run through, from this checkout.
    symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
    const weft = async (env: Record<string, string>) => {
      const { [RUN_BUILD_VARIABLE]: _, ...rest } = process.env;
      const { stdout } = await run(process.execPath, [join(root, "bin", "weft.js"), "status"], {
        env: { ...rest, ...env },
      });
      return stdout.trim();
    };
    expect(await weft({})).toBe("sources");
    expect(await weft({ [RUN_BUILD_VARIABLE]: "0" })).toBe("sources");
    expect(await weft({ [RUN_BUILD_VARIABLE]: "1" })).toBe("build");
  });
});

describe("builtTaskModule", () => {
  it("compiles a task module, its imports of weft's sources made imports of the build", async () => {
    const root = checkout({
      "tools/t/tasks.ts": [
        'import type { Actor } from "../../src/client/actor.ts";',
        'import { defineTask } from "../../src/worker/taskRegistry.ts";',
        'import { sleep } from "node:timers/promises";',
        'export const f = defineTask("t.f", async (a: Actor | number): Promise<number> => {',
        '  const { x } = await import("../../src/util/x.ts");',
        "  await sleep(0);",
        "  return x(a as number);",
        "});",
      ].join("\n"),
    });
    const out = await builtTaskModule(join(root, "tools/t/tasks.ts"), join(root, "t.mjs"), root);
    const code = readFileSync(out, "utf8");
    const dist = (path: string) => JSON.stringify(pathToFileURL(join(root, "dist", path)).href);
    expect(code).toContain(`import { defineTask } from ${dist("worker/taskRegistry.js")};`);
    expect(code).toContain(`await import(${dist("util/x.js")})`);
    expect(code).toContain('from "node:timers/promises"');
    expect(code).not.toContain("Actor");
    expect(code).not.toContain(".ts");
  });

  it("refuses a relative import of anything else, which would not be compiled", async () => {
    const root = checkout({
      "tools/t/tasks.ts": 'import { g } from "./helpers.ts";\nexport const h = g;\n',
    });
    await expect(
      builtTaskModule(join(root, "tools/t/tasks.ts"), join(root, "t.mjs"), root),
    ).rejects.toThrow(/tasks\.ts: imports \.\/helpers\.ts, which is not one of weft's sources/);
  });
});

describe("weftModuleUrl", () => {
  it(`names the build's module with ${RUN_BUILD_VARIABLE}=1, the source's otherwise`, () => {
    const root = "/checkout";
    const built = { [RUN_BUILD_VARIABLE]: "1" };
    expect(weftModuleUrl("worker/taskRegistry.ts", built, root)).toBe(
      "file:///checkout/dist/worker/taskRegistry.js",
    );
    expect(weftModuleUrl("worker/taskRegistry.ts", {}, root)).toBe(
      "file:///checkout/src/worker/taskRegistry.ts",
    );
    expect(weftModuleUrl("client/index.ts", { [RUN_BUILD_VARIABLE]: "0" }, root)).toBe(
      "file:///checkout/src/client/index.ts",
    );
  });
});
