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

/**
 * End the script quietly, with its `process.exitCode` so far (`fallback` if
 * none), once the reader of its stdout has gone (`npm run bench:wire | head
 * -1`): the next write fails with EPIPE, which unhandled is a stack trace on
 * stderr and exit code 1, as `cat` ends on SIGPIPE without a word. A reader
 * of its stderr gone (`2>&1 >out | head -1`) only ends its notes: the
 * results still go to stdout, as `weft`'s commands do.
 */
export function exitQuietlyWhenStdoutCloses(fallback = 0): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(process.exitCode ?? fallback);
  });
  process.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
}
