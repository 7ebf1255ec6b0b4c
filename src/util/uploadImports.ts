/**
 * Lets the modules of upload directories (`worker/uploadDirectory.ts`) import
 * packages by bare name, once per thread: module resolution hooks are the
 * thread's own, so the worker's main thread and each pool thread register
 * them (`uploadResolve.mjs` says how they resolve).
 */

import { register } from "node:module";
import { pathToFileURL } from "node:url";

const HOOKS = new URL("./uploadResolve.mjs", import.meta.url);

let registered = false;

/** True if `url` is a file of an upload directory. */
export function isUploadedModule(url: string): boolean {
  return /\/weft-uploads-\d+-[^/]+\/[^/]+$/.test(URL.canParse(url) ? new URL(url).pathname : url);
}

/** Register the resolution hooks for uploaded modules on this thread (once). */
export function resolveUploadedImports(): void {
  if (registered) return;
  // As from the working directory (the user's project), then as from weft's package.
  const fallbacks = [pathToFileURL(`${process.cwd()}/`).href, HOOKS.href];
  register(HOOKS, { data: { fallbacks } });
  registered = true;
}
