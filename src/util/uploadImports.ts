/**
 * Lets the modules of upload directories (`worker/uploadDirectory.ts`) import
 * packages by bare name, once per thread: module resolution hooks are the
 * thread's own, so the worker's main thread and each pool thread register
 * them (`uploadResolve.mjs` says how they resolve).
 */

import { readFileSync } from "node:fs";
import { register } from "node:module";
import { pathToFileURL } from "node:url";

const HOOKS = new URL("./uploadResolve.mjs", import.meta.url);

/** The root of weft's package: this module is in its `src/util/` or `dist/util/`. */
const PACKAGE_ROOT = new URL("../../", import.meta.url);

let registered = false;

/** True if `url` is a file of an upload directory. */
export function isUploadedModule(url: string): boolean {
  return /\/weft-uploads-\d+-[^/]+\/[^/]+$/.test(URL.canParse(url) ? new URL(url).pathname : url);
}

/**
 * The URLs of the running weft's entry points by specifier (`weft`,
 * `weft/worker`, …): those of `dist/` its package.json exports, or, when weft
 * runs from its sources (`npm start`, `npm run weft`, a TypeScript loader),
 * the sources they are built from. An uploaded module's `import "weft"` must
 * get the very modules the worker runs: another copy (a stale `dist/`, the
 * working directory's install) has a task context of its own, in which
 * `getClient()` or `currentTaskKey()` throw as if called outside a task.
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

/** Register the resolution hooks for uploaded modules on this thread (once). */
export function resolveUploadedImports(): void {
  if (registered) return;
  // As from the working directory (the user's project), then as from weft's package.
  const fallbacks = [pathToFileURL(`${process.cwd()}/`).href, HOOKS.href];
  register(HOOKS, { data: { fallbacks, entries: runningEntries() } });
  registered = true;
}
