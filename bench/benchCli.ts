/** What the benchmark scripts share: running `main` as the entry point. */

import { CommanderError } from "commander";
import { exitCodeOf } from "../src/util/usageError.ts";

/**
 * Run a script's `main` with `argv` (the command line's arguments) and give its
 * exit code: `main`'s own, or for an error it throws {@link exitCodeOf}'s, as
 * `weft bench` gives them: 2 for a usage error (a bad option, one commander
 * refuses; commander has printed those), 1 for a run that failed, each said in
 * one line, `name: message`, on `stderr`.
 */
export async function runScript(
  name: string,
  main: (argv: readonly string[]) => Promise<number>,
  argv: readonly string[] = process.argv.slice(2),
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  try {
    return await main(argv);
  } catch (err) {
    if (!(err instanceof CommanderError)) {
      stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    return exitCodeOf(err);
  }
}
