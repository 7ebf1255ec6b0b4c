/**
 * A paired comparison of two versions of weft on the cluster benchmark's
 * graphs: this checkout and another one (`--base DIR`, e.g. a `git worktree`
 * of an older commit with its `node_modules`). Each side is a LocalCluster of
 * 2 workers × 1 thread in a process of its own (`clusterAbSide.ts`, with this
 * process's V8 flags); they run each graph in turn, pair after pair,
 * alternating which goes first, while the other waits. The result is the
 * median of the per-pair time ratios (base / this: above 1, this checkout is
 * faster), over all pairs and per round: each round starts both sides
 * afresh, since a process's JIT and heap are a draw that lasts its life.
 *
 * On a shared machine whose speed drifts by tens of percent within minutes,
 * two separate `bench:cluster` invocations cannot resolve a few percent; the
 * two halves of a pair run within a second of each other, each in its own
 * heap. See `docs/client.md` for what identical code gives.
 *
 *   npm run bench:cluster-ab -- --base ../weft-old [--graphs tree,map] [--rounds 4 --pairs 25]
 *     [--executor threads]
 *
 * Prints one JSON line per graph, after one for the configuration.
 */

import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { clusterRunOptions, graphNames, positiveInteger } from "../src/bench/benchOptions.ts";
import { scaledGraph } from "../src/bench/clusterGraphs.ts";
import { median, round } from "../src/bench/stats.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";
import { checkoutProblem } from "./clusterAbSide.ts";
import {
  heapFlags,
  type PairedTimes,
  pairedHelp,
  pairedRuns,
  pairedSummary,
  Side,
} from "./pairedSides.ts";

/** Options of a paired comparison. */
export interface ClusterAbOptions {
  /** The other checkout (its root directory). */
  readonly base: string;
  readonly graphs: readonly string[];
  /** Timed pairs per graph and round. */
  readonly pairs: number;
  /** Rounds, each with fresh side processes. */
  readonly rounds: number;
  /** Untimed runs of each graph on each side first. */
  readonly warmup: number;
  /** Root-task queuing threshold; Infinity disables queuing. */
  readonly saturation: number;
  /** Multiply the graph sizes (quick checks). */
  readonly scale: number;
  /** How the workers run tasks: on the worker's main thread, or on its pool threads. Default inline. */
  readonly executor?: "inline" | "threads";
}

const SIDE_SCRIPT = fileURLToPath(new URL("./clusterAbSide.ts", import.meta.url));

/** Run the comparison; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchClusterAb(
  o: ClusterAbOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  const here = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const base = resolve(o.base);
  const problem = checkoutProblem(base);
  if (problem !== null) throw new UsageError(problem);
  emit({
    bench: "cluster-ab",
    base,
    this: here,
    rounds: o.rounds,
    pairsPerRound: o.pairs,
    warmup: o.warmup,
    workerSaturation: Number.isFinite(o.saturation) ? o.saturation : "inf",
    executor: o.executor ?? "inline",
    node: process.version,
    nodeFlags: heapFlags(),
  });
  const sideArgs = [String(o.saturation), String(o.scale), o.executor ?? "inline"];
  const results = await pairedRuns(o.graphs, o, (side) =>
    Side.start(side, SIDE_SCRIPT, [side === "base" ? base : here, ...sideArgs], heapFlags()),
  );
  for (const name of o.graphs) {
    const times = results.get(name) as PairedTimes;
    const r = pairedSummary(times);
    const tasks = scaledGraph(name, o.scale).tasks;
    emit({
      graph: name,
      tasks,
      rounds: o.rounds,
      pairsPerRound: o.pairs,
      baseSeconds: r.baseSeconds,
      thisSeconds: r.thisSeconds,
      baseTasksPerS: round(tasks / median(times.base)),
      thisTasksPerS: round(tasks / median(times.this)),
      // base / this time: above 1, this checkout is faster.
      medianRatio: r.medianRatio,
      roundMedianRatios: r.roundMedianRatios,
      ratioQuartiles: r.ratioQuartiles,
      checked: true,
    });
  }
}

/** `npm run bench:cluster-ab`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:cluster-ab")
    .description(
      "Paired comparison with another checkout on the cluster benchmark's graphs (each side a process with 2 workers × 1 thread)",
    )
    .requiredOption("--base <dir>", "the other checkout (a weft directory with node_modules)")
    .option("--graphs <list>", "comma-separated graphs", "tree,map")
    .option("--rounds <n>", "rounds, each with fresh processes for both sides", "4")
    .option("--pairs <n>", "timed pairs per graph and round", "25")
    .option("--warmup <n>", "untimed runs per graph, side and round first", "3")
    .option("--saturation <x>", "worker saturation (root-task queuing); inf disables", "inf")
    .addOption(
      new Option("--executor <kind>", "how workers run tasks (threads: on their pool threads)")
        .choices(["inline", "threads"])
        .default("inline"),
    )
    .option(
      "--scale <x>",
      "multiply the graph sizes (quick checks; > 0, at most 10, spawn at most 2)",
      "1",
    )
    .addHelpText("after", pairedHelp("bench:cluster"))
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const pairs = positiveInteger(opts.pairs, "--pairs");
  const rounds = positiveInteger(opts.rounds, "--rounds");
  const { warmup, saturation, scale } = clusterRunOptions(opts);
  const graphs = graphNames(opts.graphs, scale);
  await benchClusterAb(
    {
      base: opts.base,
      graphs,
      pairs,
      rounds,
      warmup,
      saturation,
      scale,
      executor: opts.executor as "inline" | "threads",
    },
    (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:cluster-ab", main);
}
