/**
 * Usage errors: a mistake in what a command was given (an option's value, an
 * argument, an environment variable, an input it cannot read), said in one line,
 * exit 2; as opposed to a failure of what it ran (a wrong answer, a crash), exit 1.
 * The `weft` commands, the `bench:*` scripts and the examples end by these codes.
 */

import { CommanderError } from "commander";

/** A mistake in what a command was given: one line on stderr, exit 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * The exit code of a command that threw `err`: 2 for a {@link UsageError} or
 * commander's refusal of the command line (an unknown option, a value its parser
 * refused; commander's own code is 1), 0 for commander's `--help` and `--version`,
 * 1 for anything else.
 */
export function exitCodeOf(err: unknown): 0 | 1 | 2 {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
  return err instanceof UsageError ? 2 : 1;
}
