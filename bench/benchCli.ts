/** What the benchmark scripts share: running `main` as the entry point. */

import { CommanderError } from "commander";

/**
 * Run a script's `main` with the command line: its exit code, commander's for a
 * usage error (commander has printed it), 1 with `name: message` for any other error.
 */
export async function runScript(
  name: string,
  main: (argv: readonly string[]) => Promise<number>,
): Promise<void> {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
    } else {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
