/**
 * What the cluster benchmark scripts share on their command line: the options
 * every one of them takes, checked, and running `main` as the entry point.
 */

import { CommanderError } from "commander";
import { checkGraphName } from "./clusterGraphs.ts";

/** `--warmup`, `--saturation` and `--scale` as given to commander, checked. */
export function clusterRunOptions(opts: Readonly<Record<string, string>>): {
  warmup: number;
  saturation: number;
  scale: number;
} {
  const warmup = nonNegativeInteger(opts.warmup, "--warmup");
  const saturation = opts.saturation === "inf" ? Number.POSITIVE_INFINITY : Number(opts.saturation);
  const scale = Number(opts.scale);
  if (!(saturation > 0)) throw new Error("--saturation must be > 0 or inf");
  if (!(scale > 0)) throw new Error("--scale must be > 0");
  return { warmup, saturation, scale };
}

/** `--graphs` split and checked against the benchmark's graph names. */
export function graphNames(list: string): string[] {
  return list.split(",").map((g) => checkGraphName(g.trim()));
}

/** The value of option `flag` as an integer >= 0; throws otherwise. */
export function nonNegativeInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be an integer >= 0`);
  return n;
}

/** The value of option `flag` as a positive integer; throws otherwise. */
export function positiveInteger(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
  return n;
}

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
