/**
 * `npm run bench:occupancy [-- --cases one-fn,many-fn,tree-2 --runs 5 --base DIR]`: what
 * keeping each worker's occupancy at its functions' current expected durations
 * (src/scheduler/state/occupancy.ts) costs the scheduler's state machine.
 * Each case drives a bare `SchedulerState` (validation off) with its real
 * stimuli: the graph in one `update-graph`, then one `task-finished` per
 * stimulus, oldest `compute-task` first, each with a measured compute time that
 * varies around the task's mean (so that every finish moves its function's
 * average, as on a real cluster). No workers, network or simulator: the time
 * is the scheduler's own, inside `handleStimulus`, and the process's CPU time
 * over the run (the driver's share included), which a host shared with other
 * work inflates far less than wall time. One JSON line a case: the medians
 * over the runs of both for the whole graph and µs a task, and how many times
 * a run read a worker's occupancy, a task. With `--base DIR` (another
 * checkout), its scheduler state machine runs the same cases in this process,
 * each of its runs next to one of this checkout's, alternating which goes
 * first: the line then has the median of the per-pair CPU time ratios
 * (base / this: above 1, this checkout is faster).
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Command } from "commander";
import { positiveInteger } from "../src/bench/benchOptions.ts";
import type { GraphTask } from "../src/protocol/messagesClient.ts";
import type { SchedulerEvent } from "../src/scheduler/state/events.ts";
import { SchedulerState } from "../src/scheduler/state/schedulerState.ts";
import * as testing from "../src/scheduler/state/testing.ts";
import type { WorkerInfo } from "../src/scheduler/state/workerInfo.ts";
import { shuffleGraph, treeGraph } from "../src/sim/benchmarkGraphs.ts";
import type { Workload } from "../src/sim/workload.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";

/** One measured set-up: a graph on a cluster. */
export interface OccupancyCase {
  /** Its name on the command line and in its JSON line. */
  readonly name: string;
  readonly workers: number;
  readonly threads: number;
  /** The graph, built afresh for each run. */
  readonly graph: () => Workload;
  /** The scheduler's `workerSaturation` (Infinity: queuing off), if not its default. */
  readonly saturation?: number;
}

/** `n` independent tasks of `fns` functions taken in turn, 1 ms each on average. */
function independent(n: number, fns: number): Workload {
  const tasks = [];
  for (let i = 0; i < n; i++) {
    const fn = `fn${i % fns}`;
    tasks.push({ key: `${fn}-${i}`, fn, deps: [], nbytes: 8, duration: 0.001 });
  }
  return { name: `independent(${n}, ${fns} fns)`, tasks, wanted: tasks.map((_, i) => i) };
}

/**
 * The cases `--cases` picks from: one function on 1,000 workers (a re-cost
 * touches every worker), with queuing (placement reads no occupancy) and
 * without (each placement reads the idle workers'), many functions on 100
 * (each worker runs many), and weft's benchmark graphs on small clusters.
 */
export const OCCUPANCY_CASES: readonly OccupancyCase[] = [
  { name: "one-fn", workers: 1000, threads: 2, graph: () => independent(50_000, 1) },
  {
    name: "one-fn-noqueue",
    workers: 1000,
    threads: 2,
    graph: () => independent(50_000, 1),
    saturation: Number.POSITIVE_INFINITY,
  },
  { name: "many-fn", workers: 100, threads: 2, graph: () => independent(50_000, 100) },
  ...[2, 4, 8, 16].flatMap((w) => [
    { name: `tree-${w}`, workers: w, threads: 2, graph: () => treeGraph(8192) },
    { name: `shuffle-${w}`, workers: w, threads: 2, graph: () => shuffleGraph(64) },
  ]),
];

/** What one run of a case measured. */
export interface OccupancyRun {
  readonly tasks: number;
  /** Seconds inside `handleStimulus`, graph submission included. */
  readonly seconds: number;
  /** CPU seconds of the process from the graph's submission to the last finish. */
  readonly cpuSeconds: number;
  /** Reads of a worker's `occupancy` during the run (when counted), else null. */
  readonly reads: number | null;
}

/**
 * The scheduler state machine a run drives, and the stimuli builders of its
 * checkout: this one's, or another's (`--base`).
 */
export interface SchedulerUnderTest {
  readonly SchedulerState: typeof SchedulerState;
  readonly registerWorker: typeof testing.registerWorker;
  readonly task: typeof testing.task;
  readonly updateGraph: typeof testing.updateGraph;
}

/** This checkout's scheduler state machine. */
export const THIS_SCHEDULER: SchedulerUnderTest = { SchedulerState, ...testing };

/** The scheduler state machine of the checkout at `dir`; throws, saying so, if it has none. */
export async function schedulerOf(dir: string): Promise<SchedulerUnderTest> {
  const state = resolve(dir, "src/scheduler/state");
  try {
    const [m, t] = await Promise.all([
      import(pathToFileURL(`${state}/schedulerState.ts`).href),
      import(pathToFileURL(`${state}/testing.ts`).href),
    ]);
    return { SchedulerState: m.SchedulerState, ...t } as SchedulerUnderTest;
  } catch (err) {
    throw new UsageError(
      `--base ${dir}: no scheduler state machine there (${(err as Error).message})`,
    );
  }
}

/** A deterministic stream of numbers in [0, 1) (no `Math.random`: runs repeat). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/**
 * Count the reads of each registered worker's `occupancy` by shadowing it with
 * an accessor on the instance (whatever the class keeps behind it).
 */
function countReads(s: SchedulerState): { reads: number } {
  const counter = { reads: 0 };
  const proto = Object.getPrototypeOf(s.workers.values().next().value) as object;
  const inherited = Object.getOwnPropertyDescriptor(proto, "occupancy");
  for (const ws of s.workers.values()) {
    const own = Object.getOwnPropertyDescriptor(ws, "occupancy");
    let value = own?.value as number;
    Object.defineProperty(ws, "occupancy", {
      configurable: true,
      get(this: WorkerInfo): number {
        counter.reads++;
        return own !== undefined ? value : (inherited?.get?.call(this) as number);
      },
      set(this: WorkerInfo, v: number): void {
        if (own !== undefined) value = v;
        else inherited?.set?.call(this, v);
      },
    });
  }
  return counter;
}

/** Run `c` once; throws if the scheduler did not bring every wanted key to memory. */
export function runOccupancyCase(
  c: OccupancyCase,
  o: { countReads?: boolean; scheduler?: SchedulerUnderTest } = {},
): OccupancyRun {
  const {
    SchedulerState: State,
    registerWorker,
    task,
    updateGraph,
  } = o.scheduler ?? THIS_SCHEDULER;
  const w = c.graph();
  const s = new State({
    validate: false,
    ...(c.saturation === undefined ? {} : { workerSaturation: c.saturation }),
  });
  let seconds = 0;
  const queue: { worker: string; key: string; runId: number; mean: number }[] = [];
  let head = 0;
  const mean = new Map(w.tasks.map((t) => [t.key, t.duration]));
  const feed = (ev: SchedulerEvent): void => {
    const t0 = performance.now();
    const out = s.handleStimulus(ev);
    seconds += (performance.now() - t0) / 1000;
    for (const { to, msg } of out) {
      if (to.kind === "worker" && msg.op === "compute-task") {
        queue.push({
          worker: to.address,
          key: msg.key,
          runId: msg.runId,
          mean: mean.get(msg.key) ?? 0.001,
        });
      }
    }
  };
  for (let i = 0; i < c.workers; i++) feed(registerWorker(`w${i}`, c.threads));
  const counter = o.countReads === true ? countReads(s) : null;
  const tasks: Record<string, GraphTask> = {};
  for (const t of w.tasks)
    tasks[t.key] = task(
      t.deps.map((d) => w.tasks[d].key),
      { fn: t.fn },
    );
  const cpu0 = process.cpuUsage();
  feed(
    updateGraph(
      "c",
      tasks,
      w.wanted.map((i) => w.tasks[i].key),
    ),
  );
  const random = lcg(1);
  while (head < queue.length) {
    const q = queue[head++];
    const d = q.mean * (0.5 + random());
    feed({
      kind: "worker-message",
      worker: q.worker,
      msg: {
        op: "task-finished",
        key: q.key,
        runId: q.runId,
        nbytes: 8,
        typename: "number",
        startstops: [{ action: "compute", start: 0, stop: d }],
        stimulusId: `finished-${head}`,
      },
    });
  }
  const cpu = process.cpuUsage(cpu0);
  for (const i of w.wanted) {
    const key = w.tasks[i].key;
    const state = s.tasks.get(key)?.state;
    if (state !== "memory") throw new Error(`${c.name}: ${key} ended ${state ?? "forgotten"}`);
  }
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { tasks: w.tasks.length, seconds, cpuSeconds, reads: counter?.reads ?? null };
}

/** The median of `xs` (not empty). */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** What one invocation measures. */
export interface OccupancyBenchOptions {
  readonly cases: readonly OccupancyCase[];
  readonly runs: number;
}

/** `--cases` and `--runs` as given to commander, checked. */
export function occupancyBenchOptions(
  opts: Readonly<Record<string, string>>,
): OccupancyBenchOptions {
  const runs = positiveInteger(opts.runs, "--runs");
  const cases = opts.cases.split(",").map((name) => {
    const c = OCCUPANCY_CASES.find((x) => x.name === name.trim());
    if (c === undefined) {
      throw new UsageError(
        `--cases: unknown case '${name.trim()}'; known: ${OCCUPANCY_CASES.map((x) => x.name).join(", ")}`,
      );
    }
    return c;
  });
  return { cases, runs };
}

/**
 * Run each case once to warm up, `runs` times timed, once counting reads; emit
 * a line a case. With `base`, each timed run of this checkout is paired with
 * one of `base`, alternating which goes first.
 */
export function benchOccupancy(
  o: OccupancyBenchOptions,
  emit: (line: string) => void,
  base: SchedulerUnderTest | null = null,
): void {
  const ms = (x: number): number => Math.round(x * 1000) / 1000;
  for (const c of o.cases) {
    runOccupancyCase(c); // warm-up
    if (base !== null) runOccupancyCase(c, { scheduler: base });
    const runs: OccupancyRun[] = [];
    const baseRuns: OccupancyRun[] = [];
    for (let i = 0; i < o.runs; i++) {
      if (base !== null && i % 2 === 0) baseRuns.push(runOccupancyCase(c, { scheduler: base }));
      runs.push(runOccupancyCase(c));
      if (base !== null && i % 2 === 1) baseRuns.push(runOccupancyCase(c, { scheduler: base }));
    }
    // Last: its accessors on the workers would leave the reading code slower for the runs after.
    const counted = runOccupancyCase(c, { countReads: true });
    const med = median(runs.map((r) => r.seconds));
    const cpu = median(runs.map((r) => r.cpuSeconds));
    const perTask = (x: number): number => Math.round((x / counted.tasks) * 1e6 * 100) / 100;
    const paired =
      base === null
        ? {}
        : {
            baseCpuSeconds: ms(median(baseRuns.map((r) => r.cpuSeconds))),
            allBaseCpu: baseRuns.map((r) => ms(r.cpuSeconds)),
            medianRatio:
              Math.round(median(runs.map((r, i) => baseRuns[i].cpuSeconds / r.cpuSeconds)) * 1000) /
              1000,
          };
    emit(
      JSON.stringify({
        bench: "occupancy",
        case: c.name,
        workers: c.workers,
        tasks: counted.tasks,
        runs: o.runs,
        seconds: ms(med),
        microsPerTask: perTask(med),
        cpuSeconds: ms(cpu),
        cpuMicrosPerTask: perTask(cpu),
        allCpu: runs.map((r) => ms(r.cpuSeconds)),
        readsPerTask: Math.round(((counted.reads ?? 0) / counted.tasks) * 100) / 100,
        ...paired,
      }),
    );
  }
}

/** The command line: `--cases`, `--runs`, `--base`. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:occupancy")
    .description(
      "What keeping occupancy at current expected durations costs the scheduler: a bare scheduler state driven through a graph per case, one JSON line each",
    )
    .option(
      "--cases <list>",
      `comma-separated cases (${OCCUPANCY_CASES.map((c) => c.name).join(", ")})`,
      "one-fn,one-fn-noqueue,many-fn,tree-2,tree-16,shuffle-2,shuffle-16",
    )
    .option("--runs <n>", "timed runs a case (the median is given)", "5")
    .option(
      "--base <dir>",
      "another checkout whose scheduler runs each case too, paired run by run (medianRatio: base / this CPU time)",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  const o = occupancyBenchOptions(opts);
  const base = opts.base === undefined ? null : await schedulerOf(opts.base);
  benchOccupancy(o, (line) => console.log(line), base);
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:occupancy", main);
}
