/**
 * Whether a module is the script node was started with (`node file.ts`,
 * `tsx file.ts`, an npm script), as opposed to imported by another module or a
 * test: scripts that are also importable run their `main` only then.
 */

import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** True if the module at `moduleUrl` (its `import.meta.url`) is node's entry script. */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}
