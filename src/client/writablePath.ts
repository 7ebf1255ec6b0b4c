/**
 * Whether a file can be written at a path, asked before the code whose report
 * goes there runs (`performanceReport`, `profile`'s `path`), as the commands
 * check theirs (`outputProblem`): written only once the code is over, a path in
 * a directory that is not there (a typo, a directory not made yet) failed then,
 * after hours of computing, and the code's value was lost with the report.
 */

import { fileURLToPath } from "node:url";
import { outputProblem } from "../util/outputFile.ts";

/**
 * Resolves if a file can be written at `path` (a file path or a `file:` URL):
 * one there that this process may replace, or a new one in a directory it may
 * write in. Rejects otherwise with an Error naming `what` (the call), the path
 * and why. Nothing is created or changed.
 */
export async function checkWritablePath(what: string, path: string | URL): Promise<void> {
  let file: string;
  try {
    file = path instanceof URL ? fileURLToPath(path) : path;
  } catch (err) {
    throw new Error(`${what}: cannot write to ${String(path)}: ${(err as Error).message}`);
  }
  const problem = await outputProblem(file);
  if (problem !== null) throw new Error(`${what}: cannot write to ${file}: ${problem}`);
}
