/**
 * The four graphs of the cluster benchmark (../shared/bench/README.md), each
 * with its expected answer: map (`inc(i)`, gathered), a binary tree sum over
 * `inc(i)` leaves, a 64×64 shuffle, and a chain of `inc`. Sizes are
 * parameters so that tests can run small versions. `prefix` keeps the keys of
 * successive runs apart.
 */

import type { Client } from "../client/client.ts";
import type { Future } from "../client/future.ts";
import { concat, inc, nap, spawnTree } from "./clusterTasks.ts";
import { BENCH_GRAPH_SIZES, checkGraphName } from "./graphNames.ts";

/** A benchmark graph: how many tasks, how to run it, how to check the answer. */
export interface BenchGraph {
  readonly name: string;
  readonly tasks: number;
  /** Submit, wait for the answer and return it. */
  run(client: Client, prefix: string): Promise<unknown>;
  /** Why `answer` is wrong, or null. */
  check(answer: unknown): string | null;
}

/**
 * An empty graph. A `Map`, the cheapest mapping to fill with thousands of
 * fresh keys (which is timed with the graph): an object would internalize
 * each key, and a literal `{}` would build a hidden class per key first.
 */
function newGraph(): Map<string, unknown[]> {
  return new Map();
}

function expectEqual(what: string, got: unknown, want: unknown): string | null {
  return got === want ? null : `${what}: expected ${String(want)}, got ${String(got)}`;
}

/** The results of `futures`, which are then released (the benchmark waits for an empty scheduler). */
async function gatherReleasing(
  client: Client,
  futures: readonly Future[],
): Promise<readonly unknown[]> {
  try {
    return await client.gather(futures);
  } finally {
    for (const f of futures) f.release();
  }
}

/** Why `answer` is not `[1, 2, …, n]` (each `i + 1`), or null. */
function checkIncremented(graph: string, answer: unknown, n: number): string | null {
  const xs = answer as number[];
  if (!Array.isArray(xs) || xs.length !== n) return `${graph}: expected ${n} results`;
  for (let i = 0; i < n; i++) if (xs[i] !== i + 1) return `${graph}: result ${i} is ${xs[i]}`;
  return null;
}

/** `inc(i)` for i < n with `client.map`, gathered. */
export function mapGraph(n = 10_000): BenchGraph {
  return {
    name: "map",
    tasks: n,
    async run(client) {
      const futures = client.map(
        inc,
        Array.from({ length: n }, (_, i) => i),
        { pure: false },
      );
      return gatherReleasing(client, futures);
    },
    check(answer) {
      return checkIncremented("map", answer, n);
    },
  };
}

/**
 * The tasks of {@link treeGraph} over `leaves` leaves: the leaves and one `add` for each
 * pair of a level, a level of odd length ending with `add(x, 0)`. `2 * leaves - 1`
 * when `leaves` is a power of two, more otherwise (a scaled tree).
 */
function treeTasks(leaves: number): number {
  let tasks = leaves;
  for (let level = leaves; level > 1; ) {
    level = Math.ceil(level / 2);
    tasks += level;
  }
  return tasks;
}

/** A binary tree of `add` over `leaves` leaves `inc(i)`; the root is wanted. */
export function treeGraph(leaves = 8_192): BenchGraph {
  return {
    name: "tree",
    tasks: treeTasks(leaves),
    async run(client, prefix) {
      const graph = newGraph();
      let level: string[] = [];
      for (let i = 0; i < leaves; i++) {
        const key = `${prefix}leaf-${i}`;
        graph.set(key, ["inc", i]);
        level.push(key);
      }
      for (let depth = 1; level.length > 1; depth++) {
        const next: string[] = [];
        for (let i = 0; i < level.length; i += 2) {
          const key = `${prefix}sum-${depth}-${i >> 1}`;
          graph.set(key, ["add", level[i], i + 1 < level.length ? level[i + 1] : 0]);
          next.push(key);
        }
        level = next;
      }
      const out = await client.get(graph, { keys: level });
      return out[level[0]];
    },
    check(answer) {
      return expectEqual("tree", answer, (leaves * (leaves + 1)) / 2);
    },
  };
}

/**
 * `n` partitions of `size` ints → `n × n` splits (`v % n == j`) → `n`
 * concatenations; the concatenations are wanted.
 */
export function shuffleGraph(n = 64, size = 1_000): BenchGraph {
  return {
    name: "shuffle",
    tasks: n + n * n + n,
    async run(client, prefix) {
      const graph = newGraph();
      for (let i = 0; i < n; i++) graph.set(`${prefix}load-${i}`, ["load", i * size, size]);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++)
          graph.set(`${prefix}split-${i}-${j}`, ["split", `${prefix}load-${i}`, n, j]);
      }
      const keys: string[] = [];
      for (let j = 0; j < n; j++) {
        const key = `${prefix}concat-${j}`;
        graph.set(key, [concat, Array.from({ length: n }, (_, i) => `${prefix}split-${i}-${j}`)]);
        keys.push(key);
      }
      const out = await client.get(graph, { keys });
      return keys.map((k) => out[k]);
    },
    check(answer) {
      const parts = answer as number[][];
      if (!Array.isArray(parts) || parts.length !== n) return `shuffle: expected ${n} partitions`;
      let count = 0;
      for (let j = 0; j < n; j++) {
        for (const v of parts[j]) {
          if (v % n !== j) return `shuffle: ${v} in partition ${j}`;
        }
        count += parts[j].length;
      }
      return expectEqual("shuffle: values", count, n * size);
    },
  };
}

/** `n` tasks, each `inc` of the previous; the last is wanted. */
export function chainGraph(n = 2_000): BenchGraph {
  return {
    name: "chain",
    tasks: n,
    async run(client, prefix) {
      const graph = newGraph();
      graph.set(`${prefix}chain-0`, ["inc", 0]);
      for (let i = 1; i < n; i++)
        graph.set(`${prefix}chain-${i}`, ["inc", `${prefix}chain-${i - 1}`]);
      const last = `${prefix}chain-${n - 1}`;
      const out = await client.get(graph, { keys: [last] });
      return out[last];
    },
    check(answer) {
      return expectEqual("chain", answer, n);
    },
  };
}

/**
 * Tasks that submit tasks: one root task of a binary recursion `depth` deep
 * (`spawnTree`), each inner task submitting its two children through its own
 * client and waiting for them: `2^(depth+1) - 1` tasks, of which `2^depth - 1`
 * wait at once at the deepest point. Not one of Dask's four: it measures how a
 * worker runs tasks that wait (with the thread pool, whether a waiting task's
 * thread is lent to the next).
 */
export function spawnGraph(depth = 7): BenchGraph {
  return {
    name: "spawn",
    tasks: 2 ** (depth + 1) - 1,
    async run(client, prefix) {
      const key = `${prefix}spawn`;
      const root = client.submitWith({ key, pure: false }, spawnTree, key, depth);
      try {
        return await root;
      } finally {
        root.release();
      }
    },
    check(answer) {
      return expectEqual("spawn", answer, 2 ** depth);
    },
  };
}

/**
 * A backlog on one worker (not one of Dask's four): `n` tasks of `ms`
 * milliseconds each (`nap`), all placed on the first worker by a loose
 * restriction (`allowOtherWorkers`), so that the others may run them too. It
 * measures work stealing: with it, idle workers take part of the backlog
 * (compare `--no-work-stealing`); without it, one worker runs every task.
 */
export function skewGraph(n = 200, ms = 5): BenchGraph {
  return {
    name: "skew",
    tasks: n,
    async run(client) {
      const [first] = (await client.workers()).map((w) => w.address).sort();
      if (first === undefined) throw new Error("skew: no worker");
      const futures = Array.from({ length: n }, (_, i) =>
        client.submitWith({ workers: [first], allowOtherWorkers: true, pure: false }, nap, i, ms),
      );
      return gatherReleasing(client, futures);
    },
    check(answer) {
      return checkIncremented("skew", answer, n);
    },
  };
}

/** The four graphs at the sizes of the benchmark. */
export function benchGraphs(): BenchGraph[] {
  return [mapGraph(), treeGraph(), shuffleGraph(), chainGraph()];
}

const GRAPH_FUNCTIONS: Record<string, unknown> = {
  mapGraph,
  treeGraph,
  shuffleGraph,
  chainGraph,
  spawnGraph,
  skewGraph,
};

/**
 * The graph `name` scaled by `scale` (sizes rounded, at least 2), built by `module`:
 * this one, or another checkout's `bench/clusterGraphs.ts`. Throws for an unknown name.
 */
export function scaledGraph(
  name: string,
  scale: number,
  module: Record<string, unknown> = GRAPH_FUNCTIONS,
): BenchGraph {
  const spec = BENCH_GRAPH_SIZES[checkGraphName(name)];
  const make = module[spec.fn];
  if (typeof make !== "function") throw new Error(`no ${spec.fn} among the graph functions`);
  return (make as (...sizes: number[]) => BenchGraph)(
    ...spec.sizes.map((n) => Math.max(2, Math.round(n * scale))),
  );
}
