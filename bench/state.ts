/**
 * `npm run bench:state`: the worker state machine alone, replaying the recorded
 * stimulus streams of ../shared/bench/ (see src/bench/stateBench.ts, which
 * `weft bench state` runs too).
 *
 *   npm run bench:state [-- [--runs 5] [--warmup 1] [--streams tree,churn] [--tasks 1000000]]
 */

import { runStateBench } from "../src/bench/stateBench.ts";
import {
  type StateBenchCliOptions,
  stateBenchCommand,
  stateBenchOptions,
} from "../src/bench/stateBenchCommand.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { runScript } from "./benchCli.ts";

/** `npm run bench:state` with `argv`; returns the exit code (throws for bad options). */
export async function main(argv: readonly string[]): Promise<number> {
  const program = stateBenchCommand("bench:state").exitOverride();
  program.parse([...argv], { from: "user" });
  const options = stateBenchOptions(program.opts<StateBenchCliOptions>());
  return runStateBench(options, { stdout: process.stdout, stderr: process.stderr }, "bench:state");
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:state", main);
}
