/**
 * A long-lived cluster, graph after graph: does its memory stay flat? A
 * `LocalCluster` of 2 inline workers runs `--rounds` small graphs in turn (a
 * map of 500 `inc`, a tree over 256 leaves, an 8×8 shuffle), each checked,
 * with a new client every `--client-every` rounds (the old one closed). Every
 * `--every` rounds the heap is measured after two full collections. The
 * summary gives the heap's growth per round over the second half of the run,
 * after the bounded logs (transition and stimulus logs, task stream, events)
 * have filled: a leak shows as a steady slope there.
 *
 *   npm run bench:soak [-- [--rounds 1000] [--protocol tcp] [--prefixes varying]]
 *
 * `--prefixes stable` (default) keys every round's tasks under the same key
 * prefixes (`key_split` drops the round's word); `varying` gives each round
 * prefixes of its own (`r12-leaf`), which the workers keep counts and metric
 * totals of for good, as Dask's do (the seed's `TaskCounter`, Dask's
 * `digests_total`): that growth is by design and measured here.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Command } from "commander";
import { pino } from "pino";
import { positiveInteger } from "../src/bench/benchOptions.ts";
import { type BenchGraph, mapGraph, shuffleGraph, treeGraph } from "../src/bench/clusterGraphs.ts";
import { round } from "../src/bench/stats.ts";
import { LocalCluster } from "../src/client/localCluster.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";

const TASKS = new URL("../src/bench/clusterTasks.ts", import.meta.url).href;

/** Options of a soak. */
export interface SoakOptions {
  readonly rounds: number;
  readonly every: number;
  readonly clientEvery: number;
  readonly protocol: "inproc" | "tcp";
  readonly prefixes: "stable" | "varying";
}

/** One measurement: after `round` rounds, the heap used after full collections. */
export interface SoakPoint {
  readonly round: number;
  readonly heapBytes: number;
}

/** A full collection, whether or not node was started with `--expose-gc`. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * Least-squares slope of the heap against the round over the points of the
 * second half of the run (bytes a round); null with fewer than two such points.
 */
export function secondHalfSlope(points: readonly SoakPoint[], rounds: number): number | null {
  const late = points.filter((p) => p.round > rounds / 2);
  if (late.length < 2) return null;
  const n = late.length;
  const mx = late.reduce((s, p) => s + p.round, 0) / n;
  const my = late.reduce((s, p) => s + p.heapBytes, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of late) {
    sxy += (p.round - mx) * (p.heapBytes - my);
    sxx += (p.round - mx) ** 2;
  }
  return sxy / sxx;
}

/** The key prefix of round `r`'s tasks (see the module's comment). */
function roundPrefix(r: number, prefixes: SoakOptions["prefixes"]): string {
  // key_split keeps the first word, and stops at the first word that is not letters only.
  return prefixes === "stable" ? `soak-r${r}x-` : `r${r}-`;
}

/** Run the soak; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchSoak(
  o: SoakOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<{ points: SoakPoint[]; slope: number | null }> {
  emit({
    bench: "soak",
    workers: 2,
    executor: "inline",
    transport: o.protocol,
    rounds: o.rounds,
    every: o.every,
    clientEvery: o.clientEvery,
    prefixes: o.prefixes,
    node: process.version,
  });
  const gc = collector();
  const graphs: BenchGraph[] = [mapGraph(500), treeGraph(256), shuffleGraph(8, 100)];
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor: "inline",
    protocol: o.protocol,
    taskModules: [TASKS],
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  const points: SoakPoint[] = [];
  const t0 = performance.now();
  let tasks = 0;
  try {
    let client = await cluster.client();
    for (let r = 1; r <= o.rounds; r++) {
      if (r % o.clientEvery === 0) {
        await client.close();
        client = await cluster.client();
      }
      const graph = graphs[r % graphs.length];
      const wrong = graph.check(await graph.run(client, roundPrefix(r, o.prefixes)));
      if (wrong !== null) throw new Error(`round ${r}: ${wrong}`);
      tasks += graph.tasks;
      if (r % o.every === 0 || r === o.rounds) {
        gc();
        gc();
        const heapBytes = process.memoryUsage().heapUsed;
        const left = (await client.counters()).tasks;
        points.push({ round: r, heapBytes });
        emit({
          round: r,
          tasks,
          seconds: round((performance.now() - t0) / 1000, 1),
          heapMB: round(heapBytes / 1e6, 1),
          rssMB: round(process.memoryUsage.rss() / 1e6, 1),
          schedulerTasks: left,
        });
        if (left !== 0) throw new Error(`round ${r}: the scheduler still holds ${left} tasks`);
      }
    }
    await client.close();
  } finally {
    await cluster.close();
  }
  const slope = secondHalfSlope(points, o.rounds);
  emit({
    summary: "soak",
    rounds: o.rounds,
    tasks,
    heapBytesPerRoundSecondHalf: slope === null ? null : round(slope),
    heapBytesPerTaskSecondHalf: slope === null ? null : round((slope * o.rounds) / tasks, 1),
  });
  return { points, slope };
}

/** `npm run bench:soak`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:soak")
    .description(
      "Many small graphs on one local cluster, clients coming and going: the heap after each --every rounds, and its growth per round over the second half",
    )
    .option("--rounds <n>", "graphs to run, one after the other", "1000")
    .option("--every <n>", "measure the heap every n rounds", "50")
    .option("--client-every <n>", "a new client every n rounds", "10")
    .option("--protocol <p>", "inproc or tcp", "tcp")
    .option("--prefixes <p>", "stable (the same key prefixes each round) or varying", "stable")
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  if (opts.protocol !== "inproc" && opts.protocol !== "tcp") {
    throw new UsageError(`--protocol must be inproc or tcp, got ${opts.protocol}`);
  }
  if (opts.prefixes !== "stable" && opts.prefixes !== "varying") {
    throw new UsageError(`--prefixes must be stable or varying, got ${opts.prefixes}`);
  }
  await benchSoak(
    {
      rounds: positiveInteger(opts.rounds, "--rounds"),
      every: positiveInteger(opts.every, "--every"),
      clientEvery: positiveInteger(opts.clientEvery, "--client-every"),
      protocol: opts.protocol,
      prefixes: opts.prefixes,
    },
    (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:soak", main);
}
