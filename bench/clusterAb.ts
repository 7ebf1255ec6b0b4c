/**
 * A paired comparison of two versions of weft on the cluster benchmark's
 * graphs: this checkout and another one (`--base DIR`, e.g. a `git worktree`
 * of an older commit with its `node_modules`). Both start a LocalCluster of 2
 * workers × 1 thread in this one process and run each graph in turn, pair
 * after pair, alternating which goes first; the result is the median of the
 * per-pair time ratios (base / this: above 1, this checkout is faster).
 *
 * On a shared machine whose speed drifts by tens of percent within minutes,
 * two separate `bench:cluster` invocations cannot resolve a few percent; the
 * two halves of a pair run within a second of each other. What they share is
 * the heap: each cluster's garbage is partly collected during the other's
 * runs, hence the alternation. Identical code gives 0.97-1.00 over ~50 pairs.
 *
 *   npm run bench:cluster-ab -- --base ../weft-old [--graphs tree,map] [--pairs 50]
 *
 * Prints one JSON line per graph, after one for the configuration.
 */

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Command } from "commander";
import { pino } from "pino";
import { isEntryPoint } from "../src/util/entryPoint.ts";
import { clusterRunOptions, graphNames, runScript } from "./benchCli.ts";
import { type BenchGraph, scaledGraph } from "./clusterGraphs.ts";
import { median, quantile, round } from "./stats.ts";

/** Options of a paired comparison. */
export interface ClusterAbOptions {
  /** The other checkout (its root directory). */
  readonly base: string;
  readonly graphs: readonly string[];
  readonly pairs: number;
  /** Untimed runs of each graph on each side first. */
  readonly warmup: number;
  /** Root-task queuing threshold; Infinity disables queuing. */
  readonly saturation: number;
  /** Multiply the graph sizes (quick checks). */
  readonly scale: number;
}

/** What a checkout provides: its LocalCluster and its benchmark graphs. */
interface Side {
  readonly name: "base" | "this";
  readonly cluster: {
    client(): Promise<unknown>;
    close(): Promise<void>;
    readonly scheduler: { readonly state: { readonly tasks: { readonly size: number } } };
  };
  readonly client: unknown;
  /** Its `bench/clusterGraphs.ts`. */
  readonly graphs: Record<string, unknown>;
}

/** The files a checkout must have to take part. */
function checkoutFiles(root: string): { cluster: string; graphs: string; tasks: string } {
  return {
    cluster: join(root, "src/client/localCluster.ts"),
    graphs: join(root, "bench/clusterGraphs.ts"),
    tasks: join(root, "bench/clusterTasks.ts"),
  };
}

async function startSide(name: Side["name"], root: string, saturation: number): Promise<Side> {
  const files = checkoutFiles(root);
  for (const f of Object.values(files)) {
    if (!existsSync(f)) throw new Error(`${root} is not a weft checkout: ${f} is missing`);
  }
  const { LocalCluster } = (await import(pathToFileURL(files.cluster).href)) as {
    LocalCluster: { start(o: Record<string, unknown>): Promise<Side["cluster"]> };
  };
  const graphs = (await import(pathToFileURL(files.graphs).href)) as Side["graphs"];
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor: "inline",
    protocol: "inproc",
    taskModules: [pathToFileURL(files.tasks).href],
    scheduler: { state: { workerSaturation: saturation } },
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  return { name, cluster, client: await cluster.client(), graphs };
}

function graphOn(side: Side, name: string, scale: number): BenchGraph {
  try {
    return scaledGraph(name, scale, side.graphs);
  } catch (err) {
    throw new Error(
      `the ${side.name} checkout's bench/clusterGraphs.ts: ${(err as Error).message}`,
    );
  }
}

/** Run `graph` once on `side`, check the answer and let its releases settle; seconds. */
async function timedRun(side: Side, graph: BenchGraph, prefix: string): Promise<number> {
  const t0 = performance.now();
  const answer = await graph.run(side.client as never, prefix);
  const s = (performance.now() - t0) / 1000;
  const wrong = graph.check(answer);
  if (wrong !== null) throw new Error(`${side.name}: wrong answer: ${wrong}`);
  while (side.cluster.scheduler.state.tasks.size > 0) await sleep(1);
  return s;
}

/** Run the comparison; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchClusterAb(
  o: ClusterAbOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  const here = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const base = resolve(o.base);
  emit({
    bench: "cluster-ab",
    base,
    this: here,
    pairs: o.pairs,
    warmup: o.warmup,
    workerSaturation: Number.isFinite(o.saturation) ? o.saturation : "inf",
    node: process.version,
    nodeFlags: process.execArgv.filter((a) => a.startsWith("--") && a !== "--import"),
  });
  const sides: Side[] = [];
  try {
    sides.push(await startSide("base", base, o.saturation));
    sides.push(await startSide("this", here, o.saturation));
    const [a, b] = sides;
    let run = 0;
    for (const name of o.graphs) {
      const ga = graphOn(a, name, o.scale);
      const gb = graphOn(b, name, o.scale);
      for (let w = 0; w < o.warmup; w++) {
        await timedRun(a, ga, `w${run}-`);
        await timedRun(b, gb, `w${run++}-`);
      }
      const baseSeconds: number[] = [];
      const thisSeconds: number[] = [];
      const ratios: number[] = [];
      for (let p = 0; p < o.pairs; p++) {
        const prefix = `p${run++}-`;
        let sa: number;
        let sb: number;
        if (p % 2 === 0) {
          sa = await timedRun(a, ga, prefix);
          sb = await timedRun(b, gb, prefix);
        } else {
          sb = await timedRun(b, gb, prefix);
          sa = await timedRun(a, ga, prefix);
        }
        baseSeconds.push(sa);
        thisSeconds.push(sb);
        ratios.push(sa / sb);
      }
      emit({
        graph: name,
        tasks: gb.tasks,
        pairs: o.pairs,
        baseSeconds: round(median(baseSeconds), 4),
        thisSeconds: round(median(thisSeconds), 4),
        baseTasksPerS: round(ga.tasks / median(baseSeconds)),
        thisTasksPerS: round(gb.tasks / median(thisSeconds)),
        // base / this time: above 1, this checkout is faster.
        medianRatio: round(median(ratios), 3),
        ratioQuartiles: [round(quantile(ratios, 0.25), 3), round(quantile(ratios, 0.75), 3)],
        checked: true,
      });
    }
  } finally {
    for (const side of sides) await side.cluster.close();
  }
}

/** `npm run bench:cluster-ab`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:cluster-ab")
    .description(
      "Paired comparison with another checkout on the cluster benchmark's graphs (2 workers × 1 thread each, one process)",
    )
    .requiredOption("--base <dir>", "the other checkout (a weft directory with node_modules)")
    .option("--graphs <list>", "comma-separated graphs", "tree,map")
    .option("--pairs <n>", "timed pairs per graph (the median ratio is reported)", "50")
    .option("--warmup <n>", "untimed runs per graph and side first", "3")
    .option("--saturation <x>", "worker saturation (root-task queuing); inf disables", "inf")
    .option("--scale <x>", "multiply the graph sizes (quick checks)", "1")
    .addHelpText(
      "after",
      "\nmedianRatio is the median of base/this time over the pairs: above 1, this checkout\n" +
        "is faster. Identical code gives 0.97-1.00 over ~50 pairs on the 2-core test machine.\n" +
        "The npm script runs node with the flags of bench:cluster.",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const pairs = Number(opts.pairs);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error("--pairs must be a positive integer");
  const { warmup, saturation, scale } = clusterRunOptions(opts);
  const graphs = graphNames(opts.graphs);
  await benchClusterAb({ base: opts.base, graphs, pairs, warmup, saturation, scale }, (record) =>
    process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) await runScript("bench:cluster-ab", main);
