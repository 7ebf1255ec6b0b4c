/**
 * Whole clusters on the four standard graphs (../shared/bench/README.md): a
 * LocalCluster of 2 workers × 1 thread computes each graph, the answer is
 * checked, and tasks/s (median of the timed runs, from building the graph to
 * holding the answer) is printed with Dask's figures and the ratios.
 *
 * The timed runs follow untimed warm-up runs (3 by default): V8 compiles the
 * hot paths with its optimizing compiler only after a few thousand tasks, and
 * a cluster serves many graphs. The very first run of each graph, cold, is
 * reported too (`firstRunTasksPerS`).
 *
 *   npm run bench:cluster [-- --runs 7] [-- --graphs map,chain] [-- --executor threads]
 *
 * Prints one JSON line per graph, after one for the configuration.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { Command, Option } from "commander";
import { pino } from "pino";
import { LocalCluster } from "../src/client/localCluster.ts";
import { testTls } from "../src/comm/testTls.ts";
import { isEntryPoint } from "../src/util/entryPoint.ts";
import { clusterRunOptions, graphNames, positiveInteger, runScript } from "./benchCli.ts";
import { scaledGraph } from "./clusterGraphs.ts";
import { freshPageMicros, minorFaults, systemCpuSeconds } from "./memoryCost.ts";
import { median, round } from "./stats.ts";

/** Dask 2022.12 on this kind of machine (../shared/bench/README.md), tasks/s. */
export const DASK: Record<string, { default: number; best: number }> = {
  map: { default: 572, best: 2_264 },
  tree: { default: 542, best: 2_073 },
  shuffle: { default: 793, best: 786 },
  chain: { default: 174, best: 175 },
};

const TASKS = new URL("./clusterTasks.ts", import.meta.url).href;

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
  /** The transport between scheduler, workers and client (tls: the test credentials). Default inproc. */
  readonly protocol?: "inproc" | "tcp" | "tls";
  /** The scheduler's work stealing (its `workStealing` option). Default true, as the scheduler's. */
  readonly workStealing?: boolean;
}

/** Run the benchmark; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchCluster(
  o: ClusterBenchOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  emit({
    bench: "cluster",
    workers: 2,
    threadsPerWorker: 1,
    executor: o.executor,
    transport: o.protocol ?? "inproc",
    workerSaturation: Number.isFinite(o.saturation) ? o.saturation : "inf",
    workStealing: o.workStealing ?? true,
    runs: o.runs,
    warmup: o.warmup,
    node: process.version,
    // The V8 flags the run used (the npm script sets the young generation's size
    // and the old generation's growth; see the README).
    nodeFlags: process.execArgv.filter((a) => a.startsWith("--") && a !== "--import"),
    freshPageMicros: freshPageMicros(),
  });
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor: o.executor,
    protocol: o.protocol ?? "inproc",
    ...(o.protocol === "tls" ? { tls: testTls() } : {}),
    taskModules: [TASKS],
    scheduler: { state: { workerSaturation: o.saturation }, workStealing: o.workStealing ?? true },
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  try {
    const client = await cluster.client();
    let runId = 0;
    for (const name of o.graphs) {
      const graph = scaledGraph(name, o.scale);
      const seconds: number[] = [];
      const cpu: number[] = [];
      const transfers: number[] = [];
      const faults: number[] = [];
      const systemCpu: number[] = [];
      let firstRunSeconds = 0;
      for (let r = 0; r < o.warmup + o.runs; r++) {
        const before = (await client.counters()).keysTransferred;
        const c0 = process.cpuUsage();
        const f0 = minorFaults();
        const sys0 = systemCpuSeconds();
        const t0 = performance.now();
        const answer = await graph.run(client, `b${runId++}-`);
        const s = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        const f = minorFaults() - f0;
        const sys = systemCpuSeconds() - sys0;
        const wrong = graph.check(answer);
        if (wrong !== null) throw new Error(`wrong answer: ${wrong}`);
        if (r === 0) firstRunSeconds = s;
        if (r >= o.warmup) {
          seconds.push(s);
          cpu.push((c.user + c.system) / 1e6);
          faults.push(f);
          systemCpu.push(sys);
          transfers.push((await client.counters()).keysTransferred - before);
        }
        // Let the releases of this run settle before the next one starts.
        while (cluster.scheduler.state.tasks.size > 0) await sleep(1);
      }
      const med = median(seconds);
      const tasksPerS = graph.tasks / med;
      const dask = DASK[name] as { default: number; best: number } | undefined;
      emit({
        graph: name,
        tasks: graph.tasks,
        seconds: round(med, 4),
        tasksPerS: round(tasksPerS),
        ...(name === "chain" ? { msPerStep: round((1000 * med) / graph.tasks, 3) } : {}),
        cpuSecondsPerTask: round(median(cpu) / graph.tasks, 7),
        systemCpuSecondsPerTask: round(median(systemCpu) / graph.tasks, 7),
        minorFaultsPerRun: median(faults),
        transfersPerRun: median(transfers),
        runsSeconds: seconds.map((x) => round(x, 4)),
        runsMinorFaults: faults,
        firstRunTasksPerS: round(graph.tasks / firstRunSeconds),
        // Dask's figures are for its four graphs only (not spawn or skew).
        ...(dask !== undefined
          ? {
              daskBestTasksPerS: dask.best,
              daskDefaultTasksPerS: dask.default,
              ratioToDaskBest: round(tasksPerS / dask.best, 1),
              ratioToDaskDefault: round(tasksPerS / dask.default, 1),
            }
          : {}),
        checked: true,
      });
    }
  } finally {
    await cluster.close();
  }
}

/** `npm run bench:cluster`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:cluster")
    .description(
      "Whole-cluster benchmark: 2 workers × 1 thread on the map, tree, shuffle and chain graphs",
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
    .option("--scale <x>", "multiply the graph sizes (quick checks)", "1")
    .option("--no-work-stealing", "turn the scheduler's work stealing off (it is on by default)")
    .addOption(
      new Option("--protocol <p>", "transport (tls: with the test credentials)")
        .choices(["inproc", "tcp", "tls"])
        .default("inproc"),
    )
    .addHelpText(
      "after",
      "\nThe npm script runs node with --max-semi-space-size=64 --heap-growing-percent=100\n" +
        "(V8's young generation and old-generation growth; see the README). Each run prints\n" +
        "the flags it had as nodeFlags.",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const runs = positiveInteger(opts.runs, "--runs");
  await benchCluster(
    {
      runs,
      ...clusterRunOptions(opts),
      graphs: graphNames(opts.graphs),
      executor: opts.executor as "inline" | "threads",
      protocol: opts.protocol as "inproc" | "tcp" | "tls",
      workStealing: (opts as Record<string, unknown>).workStealing !== false,
    },
    (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) await runScript("bench:cluster", main);
