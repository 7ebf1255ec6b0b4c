/** For tests of what is garbage-collected: a script run in a fresh process with `gc()`. */

import { spawnSync } from "node:child_process";

/**
 * Run `script` (an ES module's body, TypeScript imports allowed) in a fresh
 * Node.js process with `--expose-gc`, `args` as its `process.argv[1…]`, and
 * return the JSON its stdout holds; throws with its stderr if it fails.
 */
export function runGcScript(script: string, args: readonly string[], timeoutMs = 60_000): unknown {
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script, ...args],
    { encoding: "utf8", timeout: timeoutMs },
  );
  if (child.status !== 0) {
    throw new Error(`the gc script failed (${child.status ?? child.signal}): ${child.stderr}`);
  }
  return JSON.parse(child.stdout);
}
