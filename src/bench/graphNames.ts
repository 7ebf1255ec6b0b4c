/**
 * The names and sizes of the cluster benchmark's graphs, apart from the graphs
 * themselves: checking a name must not load the benchmark's task functions
 * (`clusterTasks.ts` defines `inc`, `add`, … in the process's task registry).
 */

import { UsageError } from "../util/usageError.ts";

/** The benchmark's graphs by name: the function of `clusterGraphs.ts` that builds it, and its sizes. */
export const BENCH_GRAPH_SIZES = {
  map: { fn: "mapGraph", sizes: [10_000] },
  tree: { fn: "treeGraph", sizes: [8_192] },
  shuffle: { fn: "shuffleGraph", sizes: [64, 1_000] },
  chain: { fn: "chainGraph", sizes: [2_000] },
  // Its depth scales: 2^(depth + 1) - 1 tasks, 32,767 at the largest scale.
  spawn: { fn: "spawnGraph", sizes: [7], maxScale: 2 },
  // Scaling changes the number of tasks, not how long each takes.
  skew: { fn: "skewGraph", sizes: [200] },
} as const satisfies Record<string, { fn: string; sizes: readonly number[]; maxScale?: number }>;

/** A name of {@link BENCH_GRAPH_SIZES}. */
export type BenchGraphName = keyof typeof BENCH_GRAPH_SIZES;

/** `name` if it names one of the benchmark's graphs; throws otherwise. */
export function checkGraphName(name: string): BenchGraphName {
  if (!Object.hasOwn(BENCH_GRAPH_SIZES, name)) {
    throw new UsageError(
      `unknown graph ${JSON.stringify(name)}: expected map, tree, shuffle, chain, spawn or skew`,
    );
  }
  return name as BenchGraphName;
}

/**
 * `name` if `scale` is within the largest scale of that graph (`maxScale`: spawn's
 * task count doubles with each level of depth); throws otherwise, naming `--scale`.
 */
export function checkGraphScale(name: BenchGraphName, scale: number): BenchGraphName {
  const spec: { fn: string; maxScale?: number } = BENCH_GRAPH_SIZES[name];
  if (spec.maxScale !== undefined && scale > spec.maxScale) {
    throw new UsageError(
      `--scale ${scale} is too large for ${name}: at most ${spec.maxScale} (its tasks double with each level of depth)`,
    );
  }
  return name;
}
