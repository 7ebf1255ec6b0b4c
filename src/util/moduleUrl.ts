/** Modules given as paths or file URLs: task modules, preload modules. */

import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { showValue } from "./showValue.ts";

/**
 * A file URL for a module given as a URL or a path (resolved against the
 * current directory); throws a TypeError starting with `what` for anything else.
 */
export function fileModuleUrl(given: string | URL, what: string): string {
  const spec = given instanceof URL ? given.href : given;
  if (typeof spec !== "string" || spec === "") {
    throw new TypeError(`${what}: expected a file URL or path, got ${showValue(spec)}`);
  }
  if (spec.startsWith("file:")) return spec;
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec) && !/^[a-z]:[\\/]/i.test(spec)) {
    throw new TypeError(`${what}: only file URLs and paths are supported, got ${spec}`);
  }
  return pathToFileURL(isAbsolute(spec) ? spec : resolve(spec)).href;
}

/** `url` (a file URL, its query ignored) if the file exists; throws starting with `what` otherwise. */
export function existingModuleUrl(url: string, what: string): string {
  const u = new URL(url);
  u.search = "";
  const path = fileURLToPath(u);
  if (!existsSync(path)) throw new Error(`${what}: no such file: ${path}`);
  return url;
}
