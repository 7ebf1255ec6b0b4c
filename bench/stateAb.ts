/**
 * A paired comparison of two versions of the worker state machine on the benchmark
 * streams of `../shared/bench/`: this checkout and another one (`--base DIR`, e.g. a
 * `git worktree` of an older commit with its `node_modules`). Each side replays the
 * streams in a process of its own (`stateAbSide.ts`, with this process's heap flags
 * and `--expose-gc`), pair after pair, alternating which goes first, as
 * `bench:cluster-ab` does for whole clusters (pairedSides.ts). The result is the
 * median of the per-pair time ratios (base / this: above 1, this checkout is faster),
 * over all pairs and per round.
 *
 * On this shared machine the same replay moves by up to 2× between invocations
 * minutes apart; the two halves of a pair run within a second of each other.
 *
 *   npm run bench:state-ab -- --base ../weft-old [--streams tree,fan-in-remote] [--rounds 3 --pairs 7]
 *
 * Prints one JSON line per stream, after one for the configuration.
 */

import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { nonNegativeInteger, positiveInteger } from "../src/bench/benchOptions.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";
import {
  heapFlags,
  type PairedTimes,
  pairedHelp,
  pairedRuns,
  pairedSummary,
  Side,
} from "./pairedSides.ts";
import { checkoutProblem } from "./stateAbSide.ts";

/** Options of a paired comparison. */
export interface StateAbOptions {
  /** The other checkout (its root directory). */
  readonly base: string;
  /** The directory of the `*.jsonl.gz` streams. */
  readonly dir: string;
  readonly streams: readonly string[];
  /** Timed pairs per stream and round. */
  readonly pairs: number;
  /** Rounds, each with fresh side processes. */
  readonly rounds: number;
  /** Untimed replays of each stream on each side first. */
  readonly warmup: number;
}

const SIDE_SCRIPT = fileURLToPath(new URL("./stateAbSide.ts", import.meta.url));

/** The stream names in `dir` (files `<name>.jsonl.gz`); throws, saying so, if `dir` cannot be read. */
export function streamNames(dir: string): string[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch (err) {
    throw new UsageError(
      `cannot read ${dir} (${(err as Error).message}): give --dir the directory of the recorded streams (../shared/bench)`,
    );
  }
  return files
    .filter((f) => f.endsWith(".jsonl.gz"))
    .map((f) => f.slice(0, -".jsonl.gz".length))
    .sort();
}

/** Run the comparison; calls `emit` with each JSON record. Throws if a replay goes wrong. */
export async function benchStateAb(
  o: StateAbOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  const here = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const base = resolve(o.base);
  const dir = resolve(o.dir);
  const problem = checkoutProblem(base);
  if (problem !== null) throw new UsageError(problem);
  const available = streamNames(dir);
  if (o.streams.length === 0) throw new UsageError(`no streams to compare (${dir} has none)`);
  if (new Set(o.streams).size !== o.streams.length) {
    throw new UsageError(`a stream is named twice: ${o.streams.join(", ")}`);
  }
  for (const s of o.streams) {
    if (!available.includes(s)) {
      throw new UsageError(
        `no stream ${JSON.stringify(s)} in ${dir} (there: ${available.join(", ")})`,
      );
    }
  }
  const flags = [...heapFlags(), "--expose-gc"];
  emit({
    bench: "state-ab",
    base,
    this: here,
    rounds: o.rounds,
    pairsPerRound: o.pairs,
    warmup: o.warmup,
    node: process.version,
    nodeFlags: flags,
  });
  const results = await pairedRuns(o.streams, o, (side) =>
    Side.start(side, SIDE_SCRIPT, [side === "base" ? base : here, dir], flags),
  );
  for (const name of o.streams) {
    emit({
      stream: name,
      rounds: o.rounds,
      pairsPerRound: o.pairs,
      ...pairedSummary(results.get(name) as PairedTimes),
      checked: true,
    });
  }
}

/** `npm run bench:state-ab`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:state-ab")
    .description(
      "Paired comparison with another checkout on the worker state machine's benchmark streams",
    )
    .requiredOption("--base <dir>", "the other checkout (a weft directory with node_modules)")
    .option("--dir <dir>", "directory of *.jsonl.gz streams", "../shared/bench")
    .option("--streams <list>", "comma-separated streams (default: all)")
    .option("--rounds <n>", "rounds, each with fresh processes for both sides", "3")
    .option("--pairs <n>", "timed pairs per stream and round", "7")
    .option("--warmup <n>", "untimed replays per stream, side and round first", "1")
    .addHelpText("after", pairedHelp("bench:state"))
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const pairs = positiveInteger(opts.pairs, "--pairs");
  const rounds = positiveInteger(opts.rounds, "--rounds");
  const warmup = nonNegativeInteger(opts.warmup, "--warmup");
  const streams =
    opts.streams === undefined
      ? streamNames(opts.dir)
      : opts.streams.split(",").map((s) => s.trim());
  await benchStateAb({ base: opts.base, dir: opts.dir, streams, pairs, rounds, warmup }, (record) =>
    process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:state-ab", main);
}
