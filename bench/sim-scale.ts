/**
 * `npm run bench:sim [-- --workers 10,30,100,300,1000 --per-worker 1000 --workload tree --validate]`:
 * how the scheduler's and the workers' cost per task grows with the cluster.
 * For each size, one simulated cluster (validation and faults off) computes
 * `per-worker × workers` tasks (a tree reduction by default, so that results
 * move between workers; with `--validate`, checked as `weft sim` checks by default);
 * the time spent inside the scheduler state machine
 * and inside all worker state machines is measured around their
 * `handleStimulus` calls. One JSON line per size; exit 1 if a run did not end
 * right (its line has `ok: false` and the failure).
 */

import { Command } from "commander";
import { positiveInteger } from "../src/bench/benchOptions.ts";
import { NO_FAULTS } from "../src/sim/faults.ts";
import {
  resolveSimOptions,
  type SimOptions,
  WORKLOAD_KINDS,
  type WorkloadKind,
} from "../src/sim/options.ts";
import { simulate } from "../src/sim/simulation.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";

/** What one invocation measures. */
export interface SimScaleOptions {
  /** Cluster sizes, one simulated cluster each. */
  workers: number[];
  perWorker: number;
  workload: WorkloadKind;
  /** Validate as `weft sim` does by default (the tasks each stimulus changed, each machine whole as `--validate-every auto`). */
  validate: boolean;
}

/** The flags as commander gives them. */
export interface SimScaleFlags {
  readonly workers: string;
  readonly perWorker: string;
  readonly workload: string;
  readonly validate?: boolean;
}

/** `--workers`, `--per-worker`, `--workload` and `--validate` as given to commander, checked. */
export function simScaleOptions(opts: SimScaleFlags): SimScaleOptions {
  const workers = opts.workers.split(",").map((w) => positiveInteger(w.trim(), "--workers"));
  const perWorker = positiveInteger(opts.perWorker, "--per-worker");
  const workload = opts.workload;
  if (!(WORKLOAD_KINDS as readonly string[]).includes(workload)) {
    throw new UsageError(
      `--workload must be one of ${WORKLOAD_KINDS.join(", ")}, got '${workload}'`,
    );
  }
  // Every size is checked before the first runs: a size the simulator refuses (too many
  // tasks or workers) ended the benchmark after the sizes before it had run for minutes.
  for (const w of workers) {
    try {
      resolveSimOptions(scaleRun(w, perWorker, workload as WorkloadKind));
    } catch (err) {
      throw new UsageError(`--workers ${w} --per-worker ${perWorker}: ${(err as Error).message}`);
    }
  }
  return {
    workers,
    perWorker,
    workload: workload as WorkloadKind,
    validate: opts.validate === true,
  };
}

/** The simulation of the cluster of `workers` workers, `perWorker` tasks each. */
function scaleRun(
  workers: number,
  perWorker: number,
  workload: WorkloadKind,
  overrides: Partial<SimOptions> = {},
): SimOptions {
  const tasks = workers * perWorker;
  // The tree's size is its leaf count: about half the tasks.
  const size = workload === "tree" ? Math.ceil(tasks / 2) : tasks;
  return {
    seed: 1,
    workers,
    maxThreads: 2,
    workload,
    tasks: size,
    faults: NO_FAULTS,
    validate: false,
    releasePhase: false,
    maxEvents: 1e9,
    ...overrides,
  };
}

/**
 * Simulate one cluster per size and emit one result a size; returns how many runs
 * failed (a wrong answer, a deadlock: `ok: false`, the `failure` saying why).
 * `overrides` are simulator options for tests (a broken `variant`).
 */
export function benchSimScale(
  o: SimScaleOptions,
  emit: (line: string) => void,
  overrides: Partial<SimOptions> = {},
): number {
  const { perWorker, workload } = o;
  let failed = 0;
  for (const workers of o.workers) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const run = scaleRun(workers, perWorker, workload, { validate: o.validate, ...overrides });
    const r = simulate(run, { timing: true });
    if (!r.ok) failed++;
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const s = r.stats;
    const n = r.tasks;
    const per = (x: number): number => Math.round((x / n) * 100) / 100;
    emit(
      JSON.stringify({
        bench: "sim-scale",
        workload: r.workload,
        workers,
        tasks: n,
        validate: o.validate,
        ok: r.ok,
        failure: r.failure?.message ?? null,
        events: s.events,
        virtualSeconds: Math.round(s.virtualTime * 1000) / 1000,
        wallSeconds: Math.round(wall * 100) / 100,
        schedulerStimuliPerTask: per(s.schedulerStimuli),
        schedulerMicrosPerTask: per(s.schedulerMicros),
        schedulerMicrosPerStimulus:
          Math.round((s.schedulerMicros / s.schedulerStimuli) * 100) / 100,
        workerStimuliPerTask: per(s.workerStimuli),
        workerMicrosPerTask: per(s.workerMicros),
        workerMicrosPerStimulus: Math.round((s.workerMicros / s.workerStimuli) * 100) / 100,
        simMicrosPerTask: per(wall * 1e6 - s.schedulerMicros - s.workerMicros),
        transfersPerTask: per(s.transfers),
        cpuSeconds: Math.round(cpuSeconds * 100) / 100,
        /** Share of the wall time this process ran: below 1 on a busy machine, where µs figures are inflated by about 1/cpuShare. */
        cpuShare: Math.round((cpuSeconds / wall) * 100) / 100,
        heapMB: Math.round(process.memoryUsage().heapUsed / 1e6),
      }),
    );
  }
  return failed;
}

/** The command line: `--workers`, `--per-worker`, `--workload`, `--validate`. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:sim")
    .description(
      "How the scheduler's and the workers' cost per task grows with the cluster: one simulated cluster (faults off, validation off unless --validate) per size, one JSON line each",
    )
    .option("--workers <list>", "comma-separated cluster sizes", "10,30,100,300,1000")
    .option("--per-worker <n>", "tasks per worker", "1000")
    .option("--workload <kind>", `the graph (${WORKLOAD_KINDS.join(", ")})`, "tree")
    .option(
      "--validate",
      "validate as weft sim does by default: the tasks each stimulus changed after it, each machine whole after every stimulus in a run of up to 2,000 tasks, in a bigger one every size/10 (the times inside handleStimulus leave the whole checks out: wallSeconds holds them)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 every run ended right; 1 one did not (its line has ok: false and the failure).",
    )
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<SimScaleFlags>();
  const failed = benchSimScale(simScaleOptions(opts), (line) => console.log(line));
  return failed > 0 ? 1 : 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:sim", main);
}
