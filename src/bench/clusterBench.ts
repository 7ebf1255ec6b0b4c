/**
 * Whole clusters on the four standard graphs (../shared/bench/README.md): a
 * LocalCluster of 2 workers × 1 thread computes each graph, the answer is
 * checked, and tasks/s (median of the timed runs, from building the graph to
 * holding the answer) is printed with Dask's figures and, at `--scale 1`, the ratios.
 *
 * The timed runs follow untimed warm-up runs (3 by default): V8 compiles the
 * hot paths with its optimizing compiler only after a few thousand tasks, and
 * a cluster serves many graphs. The very first run of each graph, cold, is
 * reported too (`firstRunTasksPerS`).
 *
 *   npm run bench:cluster [-- [--runs 7] [--graphs map,chain] [--executor threads]]
 *   weft bench cluster [--runs 7] …
 *
 * Both run this with the V8 flags of `CLUSTER_BENCH_NODE_FLAGS`
 * (clusterBenchCommand.ts). Prints one JSON line per graph, after one for the
 * configuration.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { LocalCluster } from "../client/localCluster.ts";
import type { ClusterBenchOptions } from "./clusterBenchCommand.ts";
import { scaledGraph } from "./clusterGraphs.ts";
import { CLUSTER_TASKS } from "./clusterTasks.ts";
import { freshPageMicros, minorFaults, systemCpuSeconds } from "./memoryCost.ts";
import { median, round } from "./stats.ts";

/** Dask 2022.12 on this kind of machine (../shared/bench/README.md), tasks/s. */
export const DASK: Record<string, { default: number; best: number }> = {
  map: { default: 572, best: 2_264 },
  tree: { default: 542, best: 2_073 },
  shuffle: { default: 793, best: 786 },
  chain: { default: 174, best: 175 },
};

/**
 * Run the benchmark; calls `emit` with each JSON record, and `progress` (if
 * given) with a line as each graph starts. Throws if an answer is wrong.
 */
export async function benchCluster(
  o: ClusterBenchOptions,
  emit: (record: Record<string, unknown>) => void,
  progress?: (line: string) => void,
): Promise<void> {
  if (o.protocol === "tls" && o.tls === undefined) {
    throw new Error("--protocol tls needs TLS credentials");
  }
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
    ...(o.protocol === "tls" ? { tls: o.tls } : {}),
    taskModules: [CLUSTER_TASKS],
    scheduler: { state: { workerSaturation: o.saturation }, workStealing: o.workStealing ?? true },
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  try {
    const client = await cluster.client();
    let runId = 0;
    for (const name of o.graphs) {
      const graph = scaledGraph(name, o.scale);
      progress?.(
        `${name}: ${graph.tasks} tasks, ${o.warmup} warm-up and ${o.runs} timed run${o.runs === 1 ? "" : "s"}…`,
      );
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
        // Dask's figures are for its four graphs only (not spawn or skew), and at their
        // full sizes: a scaled graph's tasks/s is not compared with them.
        ...(dask !== undefined
          ? {
              daskBestTasksPerS: dask.best,
              daskDefaultTasksPerS: dask.default,
              ...(o.scale === 1
                ? {
                    ratioToDaskBest: round(tasksPerS / dask.best, 1),
                    ratioToDaskDefault: round(tasksPerS / dask.default, 1),
                  }
                : { ratioToDask: `none at --scale ${o.scale}: Dask's figures are for scale 1` }),
            }
          : {}),
        checked: true,
      });
    }
  } finally {
    await cluster.close();
  }
}
