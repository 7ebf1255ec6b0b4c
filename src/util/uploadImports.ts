/**
 * Gives the modules weft imports for a user (task modules, preloads, uploaded
 * modules, and what they import) the running weft for `import "weft"`, and
 * lets the modules of upload directories (`worker/uploadDirectory.ts`) import
 * packages by bare name, once per thread: module resolution hooks are the
 * thread's own, so the worker's main thread and each pool thread register
 * them, before the first such module is imported (`uploadResolve.mjs` says
 * how they resolve). A module imported before they are (a program's own
 * static import of its tasks) keeps what Node.js resolved.
 *
 * Only where needed: an uploaded module, or one from which Node.js would not
 * find the running weft (another copy, or none). Each thread that registers
 * hooks gets a hooks thread of its own (about 18 MB on Node.js 20): a worker
 * of 4 pool threads took 275 MB where it took 200 MB without.
 */

import { readFileSync, realpathSync } from "node:fs";
import { createRequire, register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const HOOKS = new URL("./uploadResolve.mjs", import.meta.url);

/** The root of weft's package: this module is in its `src/util/` or `dist/util/`. */
const PACKAGE_ROOT = new URL("../../", import.meta.url);

let registered = false;

/** True if `url` is a file of an upload directory. */
export function isUploadedModule(url: string): boolean {
  return /\/weft-uploads-\d+-[^/]+\/[^/]+$/.test(URL.canParse(url) ? new URL(url).pathname : url);
}

/** The file `path` is, links followed; `path` itself if it cannot be read. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * True unless Node.js would resolve `weft`, as imported by the module at `url`,
 * to the running weft's own entry point (`running`, a file URL): it finds
 * another copy (the project's install beside a global weft, the build beside
 * the sources) or none.
 */
export function findsOtherWeft(
  url: string,
  running: string = runningEntries().weft ?? "",
): boolean {
  if (!URL.canParse(url) || new URL(url).protocol !== "file:") return true;
  let found: string;
  try {
    found = createRequire(fileURLToPath(url)).resolve("weft");
  } catch {
    return true;
  }
  return realPath(found) !== realPath(fileURLToPath(running));
}

/**
 * The URLs of the running weft's entry points by specifier (`weft`,
 * `weft/worker`, …): those of `dist/` its package.json exports, or, when weft
 * runs from its sources (`npm start`, `npm run weft`, a TypeScript loader),
 * the sources they are built from. A task module's `import "weft"` must get
 * the very modules the worker runs: another copy (a stale `dist/`, the
 * project's own install beside a global `weft`) has classes of its own, whose
 * `wait()` refuses the futures of the worker's client.
 */
export function runningEntries(
  root: URL = PACKAGE_ROOT,
  fromSource = import.meta.url.endsWith(".ts"),
): Record<string, string> {
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const entries: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const path = typeof target === "string" ? target : target.default;
    if (path === undefined) continue;
    const built = /^\.\/dist\/(.*)\.js$/.exec(path);
    const file = fromSource && built !== null ? `./src/${built[1]}.ts` : path;
    entries[`${pkg.name}${subpath.slice(1)}`] = new URL(file, root).href;
  }
  return entries;
}

/**
 * Register the resolution hooks on this thread (once), before the user's module
 * at `url` is imported, if it needs them (see {@link findsOtherWeft}).
 */
export function resolveUserModuleImports(url: string): void {
  if (registered || !(isUploadedModule(url) || findsOtherWeft(url))) return;
  // As from the working directory (the user's project), then as from weft's package.
  const fallbacks = [pathToFileURL(`${process.cwd()}/`).href, HOOKS.href];
  register(HOOKS, { data: { fallbacks, entries: runningEntries() } });
  registered = true;
}
