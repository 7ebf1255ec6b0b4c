/**
 * The command line of the cluster benchmark (`npm run bench:cluster`, `weft bench
 * cluster`): its options, checked, and the V8 flags it runs with. Apart from the
 * benchmark itself (`clusterBench.ts`), so that `weft` can offer it without loading
 * the benchmark's task functions.
 */

import { Command, Option } from "commander";
import type { TlsCredentials } from "../comm/tls.ts";
import { clusterRunOptions, graphNames, positiveInteger } from "./benchOptions.ts";

/**
 * The V8 flags the benchmark runs with: a 64 MB young generation, and an old
 * generation that grows to twice what survived rather than four times (see
 * docs/benchmarks.md).
 */
export const CLUSTER_BENCH_NODE_FLAGS: readonly string[] = [
  "--max-semi-space-size=64",
  "--heap-growing-percent=100",
];

/** Options of a benchmark run. */
export interface ClusterBenchOptions {
  readonly runs: number;
  readonly warmup: number;
  readonly graphs: readonly string[];
  readonly executor: "inline" | "threads";
  /** Root-task queuing threshold (Dask's `worker-saturation`); Infinity disables queuing. */
  readonly saturation: number;
  /** Multiply the graph sizes (for quick checks). */
  readonly scale: number;
  /** The transport between scheduler, workers and client (tls: with `tls`). Default inproc. */
  readonly protocol?: "inproc" | "tcp" | "tls";
  /** The credentials of `protocol: "tls"`. */
  readonly tls?: TlsCredentials;
  /** The scheduler's work stealing (its `workStealing` option). Default true, as the scheduler's. */
  readonly workStealing?: boolean;
}

/** The options of the benchmark as commander gives them (see {@link clusterBenchCommand}). */
export interface ClusterBenchCliOptions {
  readonly runs: string;
  readonly warmup: string;
  readonly graphs: string;
  readonly executor: string;
  readonly saturation: string;
  readonly scale: string;
  readonly workStealing: boolean;
  readonly protocol: string;
}

/**
 * A command named `name` with the benchmark's options and help, without an
 * action: `npm run bench:cluster` and `weft bench cluster` each add theirs.
 * `tlsCredentials` says where `--protocol tls` takes its credentials from
 * (the npm script: the test ones; weft: its --tls-* options).
 */
export function clusterBenchCommand(name: string, tlsCredentials: string): Command {
  return new Command(name)
    .description(
      "Whole local clusters, 2 workers × 1 thread, on Dask's benchmark graphs (map, tree, shuffle, chain): tasks/s, each answer checked",
    )
    .option("--runs <n>", "timed runs per graph (the median is reported)", "7")
    .option("--warmup <n>", "untimed warm-up runs per graph first", "3")
    .option(
      "--graphs <list>",
      "comma-separated graphs: map, tree, shuffle, chain (Dask's four), spawn (tasks that submit tasks), skew (a backlog on one worker: work stealing)",
      "map,tree,shuffle,chain",
    )
    .addOption(
      new Option("--executor <kind>", "how workers run tasks")
        .choices(["inline", "threads"])
        .default("inline"),
    )
    .option("--saturation <x>", "worker saturation (root-task queuing); inf disables", "1.1")
    .option(
      "--scale <x>",
      "multiply the graph sizes (quick checks; > 0, at most 10, spawn at most 2)",
      "1",
    )
    .option("--no-work-stealing", "turn the scheduler's work stealing off (it is on by default)")
    .addOption(
      new Option(
        "--protocol <p>",
        `transport between the scheduler, the workers and the client (tls: with ${tlsCredentials})`,
      )
        .choices(["inproc", "tcp", "tls"])
        .default("inproc"),
    )
    .addHelpText(
      "after",
      `\nOne JSON line for the configuration, then one per graph: tasks/s (the median of the
timed runs, from building the graph to holding the answer), CPU and page faults a
task, and (at --scale 1) the ratios to Dask's figures on this kind of machine. Runs node with
${CLUSTER_BENCH_NODE_FLAGS.join(" ")} (each run prints its flags as nodeFlags).`,
    );
}

/** The options commander parsed, checked (throws an error naming the flag); `tls` for `--protocol tls`. */
export function clusterBenchOptions(
  opts: ClusterBenchCliOptions,
  tls?: TlsCredentials,
): ClusterBenchOptions {
  const run = clusterRunOptions(opts as unknown as Record<string, string>);
  return {
    runs: positiveInteger(opts.runs, "--runs"),
    ...run,
    graphs: graphNames(opts.graphs, run.scale),
    executor: opts.executor as "inline" | "threads",
    protocol: opts.protocol as "inproc" | "tcp" | "tls",
    workStealing: opts.workStealing !== false,
    ...(opts.protocol === "tls" && tls !== undefined ? { tls } : {}),
  };
}
