/**
 * For tests that start `weft` processes and programs of their own: `bin/weft.js`,
 * which in a checkout runs the sources through tsx, can run the build instead, as
 * the whole test run has it do when the build is current (`vitest.config.ts`).
 * tsx costs each process about 0.8 s more CPU (its hooks thread, the cached
 * transforms read back, source maps) than the build does.
 *
 * Only when the build is current: tests must run the code as it is, and a test run
 * without `npm run build` after an edit still runs the sources.
 */

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Read by `bin/weft.js`: `1` runs `dist/` though the sources are there. */
export const RUN_BUILD_VARIABLE = "WEFT_RUN_BUILD";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The mtimes (ms) of every file under `dir`, but those `skip` rules out. Walked by
 * hand: `readdirSync`'s `recursive` entries name their directory (`parentPath`)
 * only from Node.js 20.12, and weft runs on every Node.js 20.
 */
function mtimes(dir: string, skip: (name: string) => boolean): number[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return mtimes(path, skip);
    return e.isFile() && !skip(e.name) ? [statSync(path).mtimeMs] : [];
  });
}

/**
 * Whether `dist/` was built after the last change to any file under `src/` (test
 * files aside, which the build leaves out): `npm run build` writes `dist/` from
 * scratch, so its oldest file is as old as the build. An edit, a checkout or a new
 * file makes a source newer; a test helper's change counts too (the build leaves
 * those out as well, but telling them apart is not worth the risk of missing one).
 */
export function buildIsCurrent(root: string = ROOT): boolean {
  if (!existsSync(join(root, "dist", "cli", "weft.js"))) return false;
  const built = Math.min(...mtimes(join(root, "dist"), () => false));
  const edited = Math.max(...mtimes(join(root, "src"), (name) => name.endsWith(".test.ts")));
  return edited <= built;
}

/**
 * Whether the `weft` processes and the programs tests start run the build, not the
 * sources through tsx: `vitest.config.ts` sets {@link RUN_BUILD_VARIABLE} for the
 * whole run when the build is current, and the processes inherit it.
 */
export function testsRunBuild(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[RUN_BUILD_VARIABLE] === "1";
}

/**
 * The URL by which a program or a plain-JavaScript task module that a test writes
 * for a process of its own imports weft's module `path` (under `src/`, e.g.
 * `"worker/taskRegistry.ts"`): the build's when tests run it ({@link testsRunBuild}),
 * as nothing loads TypeScript for a `.mjs` file there, else the source.
 */
export function weftModuleUrl(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  root: string = ROOT,
): string {
  const file = testsRunBuild(env)
    ? join(root, "dist", path.replace(/\.ts$/, ".js"))
    : join(root, "src", path);
  return pathToFileURL(file).href;
}

/**
 * A task module written in TypeScript, compiled into `out` (a `.mjs` file) for
 * processes that run the build: its imports of weft's sources (`../../src/….ts`)
 * made imports of the build, the same modules, so that its task functions reach
 * the worker's own task context (a task's `workerClient`), which a second copy of
 * the sources, loaded through tsx beside the build, would not know. Any other
 * relative import is refused: it would not be compiled.
 */
export async function builtTaskModule(
  source: string,
  out: string,
  root: string = ROOT,
): Promise<string> {
  const { default: ts } = await import("typescript");
  const { outputText } = ts.transpileModule(readFileSync(source, "utf8"), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: source,
  });
  const sources = join(root, "src");
  const code = outputText.replace(/(from |import\()"(\.{1,2}\/[^"]*)"/g, (_, how, spec) => {
    const target = fileURLToPath(new URL(spec, pathToFileURL(source)));
    const inSources = relative(sources, target);
    if (inSources.startsWith("..") || !target.endsWith(".ts")) {
      throw new Error(`${source}: imports ${spec}, which is not one of weft's sources`);
    }
    const built = join(root, "dist", inSources.replace(/\.ts$/, ".js"));
    return `${how}${JSON.stringify(pathToFileURL(built).href)}`;
  });
  writeFileSync(out, code);
  return out;
}
