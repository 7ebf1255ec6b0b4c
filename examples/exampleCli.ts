/**
 * The command lines of the examples: `--help`, arguments checked, and what an error
 * prints. A mistake in what the example was given (an unknown option, a count that is
 * not one, a bad `WORDCOUNT_*` variable) is a {@link UsageError}: one line and exit 2.
 * Any other error is a real failure: its stack and exit 1.
 */

import { Command, CommanderError } from "commander";
import { parseDecimal } from "../src/util/decimal.ts";
import { UsageError } from "../src/util/usageError.ts";

/** A mistake in an example's arguments or environment: printed in one line, exit 2. */
export { UsageError };

/** Where an example writes. */
export interface ExampleOutput {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** `text` (the argument or variable `what`) as an integer ≥ `min`; a UsageError otherwise. */
export function intArg(
  what: string,
  text: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = parseDecimal(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${what} must be ${intRange(min, max)}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** "an integer ≥ 1", or "an integer from 1 to 1,000,000" when there is a maximum. */
export function intRange(min: number, max = Number.MAX_SAFE_INTEGER): string {
  return max === Number.MAX_SAFE_INTEGER
    ? `an integer ≥ ${min}`
    : `an integer from ${min} to ${max.toLocaleString("en-US")}`;
}

/** How an example ended: a usage error's line (exit 2), or a failure's stack (exit 1). */
export function reportError(name: string, err: unknown, out: ExampleOutput): number {
  if (err instanceof UsageError) {
    out.stderr.write(`${name}: ${err.message} (see --help)\n`);
    return 2;
  }
  const why = err instanceof Error ? (err.stack ?? err.message) : String(err);
  out.stderr.write(`${name}: failed: ${why}\n`);
  return 1;
}

/**
 * Run an example's command line with commander: `--help` (or `-h`) prints `usage`
 * and exits 0; an option it does not know, or more than `maxArgs` arguments, is a
 * usage error; otherwise `run` gets the arguments. Returns the exit code (see
 * {@link reportError}).
 */
export async function runExample(
  name: string,
  usage: string,
  argv: readonly string[],
  maxArgs: number,
  run: (args: readonly string[]) => Promise<number>,
  out: ExampleOutput = process,
): Promise<number> {
  let args: readonly string[] = [];
  const cmd = new Command(name)
    .exitOverride()
    .allowExcessArguments(false)
    // Commander's own lines are replaced by the example's usage and by UsageErrors.
    .configureOutput({ writeOut: (text) => out.stdout.write(text), writeErr: () => {} })
    .action((...given: unknown[]) => {
      args = (given.slice(0, maxArgs) as (string | undefined)[]).filter((a) => a !== undefined);
    });
  cmd.helpInformation = () => (usage.endsWith("\n") ? usage : `${usage}\n`);
  for (let i = 0; i < maxArgs; i++) cmd.argument(`[arg${i}]`);
  try {
    try {
      cmd.parse([...argv], { from: "user" });
    } catch (err) {
      if (!(err instanceof CommanderError)) throw err;
      if (err.code === "commander.helpDisplayed") return 0;
      throw new UsageError(usageMessage(err, argv, maxArgs));
    }
    return await run(args);
  } catch (err) {
    return reportError(name, err, out);
  }
}

/** Commander's refusal of `argv` in the examples' words. */
function usageMessage(err: CommanderError, argv: readonly string[], maxArgs: number): string {
  if (err.code === "commander.unknownOption") {
    const option = /'([^']*)'/.exec(err.message)?.[1] ?? err.message;
    return `unknown option ${option}`;
  }
  if (err.code === "commander.excessArguments") {
    const given = argv.filter((a) => !a.startsWith("-") || /^-\d/.test(a));
    return maxArgs === 0
      ? `takes no arguments, got ${given.map((a) => JSON.stringify(a)).join(" ")}`
      : `takes at most ${maxArgs} argument${maxArgs === 1 ? "" : "s"}, got ${given.length}`;
  }
  return err.message.replace(/^error: /, "");
}
