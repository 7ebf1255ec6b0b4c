/**
 * What `weft sim` does once its command line is parsed: sim.ts, its definition,
 * imports this module only then, so that `weft sim --help` loads none of it.
 */

import { constants } from "node:os";
import { SingleBar } from "cli-progress";
import { type Command, InvalidArgumentError } from "commander";
import { dumpEncodingOf } from "../../protocol/clusterDump/encoding.ts";
import { dumpFileName, writeClusterDump } from "../../protocol/clusterDump/write.ts";
import { simDump } from "../../sim/dump.ts";
import { parseFaults } from "../../sim/faults.ts";
import { resolveSimOptions, type SimOptions, type WorkloadKind } from "../../sim/options.ts";
import {
  formatFailure,
  formatRunLine,
  formatShrink,
  formatSummaryTable,
  formatTally,
} from "../../sim/report.ts";
import { addResult, emptySummary, type SimSummary, seedsPassSafeRange } from "../../sim/runMany.ts";
import { type ShrinkResult, shrink } from "../../sim/shrink.ts";
import { type SimResult, Simulation, simulate } from "../../sim/simulation.ts";
import type { Workload } from "../../sim/workload.ts";
import { optionsWithoutEffect } from "../../sim/workloadOptions.ts";
import { fileNameProblem, outputProblem } from "../../util/outputFile.ts";
import { pollTurn } from "../../util/pollTurn.ts";
import { type CliContext, EXIT } from "./context.ts";
import { GraphInputError } from "./graphInput.ts";
import { BAR_KEEPS_TERMINAL, progressBar } from "./progress.ts";
import { untilSignal } from "./serveUntil.ts";
import { SIM_OPTION_FLAGS, withSimFlags } from "./simFlags.ts";
import { loadSimGraph } from "./simGraph.ts";
import { tasksDone } from "./simProgress.ts";
import { divertStdout } from "./stdoutDiversion.ts";

/** Options of `weft sim` as commander parses them. */
export interface SimCliOptions {
  readonly seed: number;
  readonly runs?: number;
  readonly from?: number;
  readonly workload: WorkloadKind;
  readonly tasks?: number;
  readonly graph?: string;
  readonly taskDuration?: number;
  readonly taskNbytes?: number;
  readonly workers?: number;
  readonly maxThreads?: number;
  readonly outgoingLimit?: number;
  readonly incomingLimit?: number;
  readonly latency?: number;
  readonly bandwidth?: number;
  readonly replicate?: number;
  readonly replicateOne?: number;
  readonly rebalance?: number;
  readonly retire?: number;
  readonly fireAndForget?: number;
  readonly restart?: number;
  readonly restartWorker?: number;
  readonly actors?: number;
  /** As given (repeats joined); all when not given. */
  readonly faults?: string;
  readonly variant?: string;
  readonly validate: boolean;
  readonly validateEvery?: number | "auto";
  /** false with --no-work-stealing. */
  readonly workStealing: boolean;
  readonly workStealingInterval?: number;
  /** false with --no-active-memory-manager. */
  readonly activeMemoryManager: boolean;
  readonly activeMemoryManagerInterval?: number;
  readonly release: boolean;
  readonly shrink: boolean;
  readonly verbose?: boolean;
  readonly json?: boolean;
  readonly dump?: string;
}

function simOptionsOf(o: SimCliOptions, graph: Workload | null): Omit<SimOptions, "seed"> {
  let faults: SimOptions["faults"];
  try {
    faults = parseFaults(o.faults ?? "all");
  } catch (e) {
    // parseFaults' messages name no flag ("empty fault list: …").
    throw new InvalidArgumentError(`--faults: ${(e as Error).message}`);
  }
  return {
    workload: graph ?? o.workload,
    tasks: o.tasks,
    workers: o.workers,
    maxThreads: o.maxThreads,
    outgoingLimit: o.outgoingLimit,
    incomingLimit: o.incomingLimit,
    latency: o.latency,
    bandwidth: o.bandwidth,
    replicate: o.replicate,
    replicateOne: o.replicateOne,
    rebalance: o.rebalance,
    retire: o.retire,
    fireAndForget: o.fireAndForget,
    restart: o.restart,
    restartWorker: o.restartWorker,
    actors: o.actors,
    faults,
    variant: o.variant ?? "",
    validate: o.validate,
    validateEvery: o.validateEvery,
    workStealing: o.workStealing,
    workStealingInterval: o.workStealingInterval,
    activeMemoryManager: o.activeMemoryManager,
    activeMemoryManagerInterval: o.activeMemoryManagerInterval,
    releasePhase: o.release,
  };
}

/** A run as one JSON value: the whole result, without the (unserialisable) hooks. */
function resultJson(r: SimResult): object {
  return { ...r, options: { ...r.options, hooks: undefined } };
}

/** The shrinker's outcome as one JSON value; `smaller` is false when nothing smaller failed. */
function shrinkJson(s: ShrinkResult): object {
  return { tried: s.tried, smaller: s.smallest !== s.original, smallest: resultJson(s.smallest) };
}

/** The totals of many runs as one JSON value (the first failure has its own line). */
function summaryJson(s: SimSummary): object {
  const { firstFailure: _first, ...totals } = s;
  return totals;
}

/** Write one JSON line: with --json every stdout line must parse on its own. */
function writeJson(ctx: CliContext, value: object): void {
  ctx.stdout.write(`${JSON.stringify(value)}\n`);
}

async function runOne(
  ctx: CliContext,
  opts: SimCliOptions,
  base: Omit<SimOptions, "seed">,
): Promise<void> {
  let dumpPath: string | undefined;
  let dumpFormat: "yaml" | "msgpack" = "msgpack";
  if (opts.dump !== undefined) {
    dumpFormat = dumpEncodingOf(opts.dump)?.startsWith("yaml") ? "yaml" : "msgpack";
    dumpPath = dumpFileName(opts.dump, dumpFormat);
    // Checked before the run, which may take minutes, as weft run checks its files:
    // found out only at the end, it also hid the run's failure behind exit 2.
    const named = await fileNameProblem(opts.dump);
    if (named !== null) {
      ctx.stderr.write(`weft sim: --dump ${opts.dump}: ${named}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
    const problem = await outputProblem(dumpPath);
    if (problem !== null) {
      ctx.stderr.write(`weft sim: --dump ${dumpPath}: ${problem}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
  }
  // A big workload takes a while: a bar once it has run for a second.
  const progress = progressBar(ctx, `weft sim: seed ${opts.seed}`, {
    unit: "tasks done",
    minTotal: 0,
    afterMs: 1_000,
  });
  let r: SimResult;
  const sim = new Simulation({ ...base, seed: opts.seed });
  try {
    r = sim.run(() => progress.update(...tasksDone(sim)));
  } finally {
    progress.stop();
  }
  if (opts.json) writeJson(ctx, resultJson(r));
  else ctx.stdout.write(`${r.ok ? formatRunLine(r) : formatFailure(r)}\n`);
  if (dumpPath !== undefined) {
    const path = dumpPath;
    try {
      await writeClusterDump(simDump(sim), path, dumpFormat);
      ctx.stderr.write(`weft sim: wrote ${path} (weft story KEY ${path}; weft replay ${path})\n`);
    } catch (err) {
      ctx.stderr.write(`weft sim: cannot write ${path}: ${(err as Error).message}\n`);
      ctx.exitCode = EXIT.usage; // a failed run still says so below, exit 1
    }
  }
  if (!r.ok) {
    ctx.exitCode = EXIT.differences;
    if (opts.shrink) reportShrink(ctx, opts, shrink(r));
  }
}

function reportShrink(ctx: CliContext, opts: SimCliOptions, s: ShrinkResult): void {
  if (opts.json) writeJson(ctx, { shrink: shrinkJson(s) });
  else ctx.stdout.write(`${formatShrink(s)}\n`);
}

/**
 * How long the seeds of `--runs` run between two turns of the event loop: a
 * SIGINT or SIGTERM is only seen on a turn ({@link pollTurn}), and a turn per
 * seed would cost the small seeds (a few ms each) noticeably.
 */
const SEEDS_SLICE_MS = 50;

async function runMany(
  ctx: CliContext,
  opts: SimCliOptions,
  base: Omit<SimOptions, "seed">,
  count: number,
  from: number,
): Promise<void> {
  const bar =
    ctx.stderr.isTTY === true && !opts.verbose
      ? new SingleBar({
          stream: ctx.stderr,
          format: "sim [{bar}] {value}/{total} seeds | {failed} failed | {eta_formatted}",
          ...BAR_KEEPS_TERMINAL,
          clearOnComplete: true,
        })
      : null;
  bar?.start(count, 0, { failed: 0 });
  // Ctrl-C or SIGTERM ends the batch after the seed running: what the seeds before it
  // found (the tally, the first failing seed) is reported, not thrown away.
  const stop: { signal: string | null } = { signal: null };
  let finished = (): void => {};
  void untilSignal(new Promise<void>((r) => (finished = r))).then((sig) => {
    stop.signal = sig;
  });
  const t0 = performance.now();
  const summary = emptySummary();
  try {
    let sliceStart = performance.now();
    for (let seed = from; seed < from + count && stop.signal === null; seed++) {
      const r = simulate({ ...base, seed });
      addResult(summary, r);
      bar?.update(summary.runs, { failed: summary.failed });
      if (opts.json)
        writeJson(ctx, {
          seed: r.seed,
          ok: r.ok,
          failure: r.failure?.kind ?? null,
          events: r.stats.events,
        });
      else if (opts.verbose) ctx.stdout.write(`${formatRunLine(r)}\n`);
      if (performance.now() - sliceStart >= SEEDS_SLICE_MS) {
        await pollTurn();
        sliceStart = performance.now();
      }
    }
  } finally {
    finished();
    bar?.stop();
  }
  summary.wallSeconds = (performance.now() - t0) / 1000;
  const interrupted = stop.signal;
  if (interrupted !== null) {
    ctx.stderr.write(
      `weft sim: interrupted (${interrupted}) after ${summary.runs} of ${count} seeds from ${from}; the summary counts those (rerun the rest with --from ${from + summary.runs} --runs ${count - summary.runs})\n`,
    );
  }
  if (!opts.json) ctx.stdout.write(`${formatSummaryTable(summary)}\n`);
  const first = summary.firstFailure;
  if (first !== null) {
    ctx.exitCode = EXIT.differences;
    if (opts.json) writeJson(ctx, { firstFailure: resultJson(first) });
    else ctx.stdout.write(`first failure:\n${formatFailure(first)}\n`);
    // Shrinking runs many more seeds: not after the user asked to stop.
    if (opts.shrink && interrupted === null) reportShrink(ctx, opts, shrink(first));
  }
  if (opts.json) {
    writeJson(ctx, {
      summary: summaryJson(summary),
      ...(interrupted !== null ? { interrupted } : {}),
    });
  } else ctx.stdout.write(`${formatTally(summary)}\n`);
  if (interrupted !== null) {
    // As a shell reports a command a signal ended: 130 for SIGINT, 143 for SIGTERM.
    ctx.exitCode = 128 + (constants.signals[interrupted as NodeJS.Signals] ?? 0);
  }
}

/**
 * The faults turned on in `base` that its cluster can never suffer: a worker dies
 * or is cut off only while another is healthy, so that one worker alone never does.
 */
function faultsThatCannotFire(base: Omit<SimOptions, "seed">): string[] {
  if (base.workers !== 1 || base.faults === undefined) return [];
  const faults = base.faults;
  return (["death", "partition"] as const).filter((k) => faults[k] > 0);
}

/**
 * Why the flags that choose the workload do not go together, or null: `--graph`
 * is the workload, which `--workload`, `--tasks` and `--actors` would choose or
 * change (the graph's tasks are what it says), and the task costs need a graph.
 */
function graphFlagsProblem(opts: SimCliOptions, cmd: Command): string | null {
  if (opts.graph === undefined) {
    for (const [name, flag] of [
      ["taskDuration", "--task-duration"],
      ["taskNbytes", "--task-nbytes"],
    ] as const) {
      if (opts[name] !== undefined) {
        return `${flag} sets the tasks of a --graph FILE (the built-in workloads have their own)`;
      }
    }
    return null;
  }
  if (cmd.getOptionValueSource("workload") === "cli") {
    return "--graph and --workload both choose the graph the client submits: give one";
  }
  if (opts.tasks !== undefined) {
    return "--tasks sizes the built-in workloads; a --graph has its own tasks: leave --tasks out";
  }
  if (opts.actors !== undefined) {
    return "--actors makes a share of a built-in workload's tasks actors; a --graph's tasks are not (leave --actors out)";
  }
  return null;
}

/**
 * `weft sim` as `cmd` parsed it into `opts`: one seed, or `--runs` of them,
 * after checking that the options go together.
 */
export async function runSim(opts: SimCliOptions, cmd: Command, ctx: CliContext): Promise<void> {
  if (opts.dump !== undefined && opts.runs !== undefined) {
    cmd.error("error: --dump writes one run: give --seed, not --runs", {
      exitCode: EXIT.usage,
    });
    return;
  }
  // A lone --from would run --seed and look as if it had run the seed asked for.
  if (opts.from !== undefined && opts.runs === undefined) {
    cmd.error("error: --from needs --runs (one run takes --seed)", { exitCode: EXIT.usage });
    return;
  }
  // One run prints its result whole; --verbose would change nothing, unsaid.
  if (opts.verbose === true && opts.runs === undefined) {
    cmd.error("error: --verbose needs --runs (one run prints its result whole)", {
      exitCode: EXIT.usage,
    });
    return;
  }
  // An interval for rounds the other flag turns off would be ignored, unsaid.
  for (const [off, interval, name] of [
    ["workStealing", "workStealingInterval", "work-stealing"],
    ["activeMemoryManager", "activeMemoryManagerInterval", "active-memory-manager"],
  ] as const) {
    if (opts[off] === false && opts[interval] !== undefined) {
      cmd.error(`error: --${name}-interval sets the rounds that --no-${name} turns off: give one`, {
        exitCode: EXIT.usage,
      });
      return;
    }
  }
  if (!opts.validate && opts.validateEvery !== undefined) {
    cmd.error("error: --validate-every sets the checks that --no-validate turns off: give one", {
      exitCode: EXIT.usage,
    });
    return;
  }
  // --json already prints a line a run: --verbose would change nothing, unsaid.
  if (opts.verbose === true && opts.json === true) {
    cmd.error("error: --verbose and --json both print a line per run: give one", {
      exitCode: EXIT.usage,
    });
    return;
  }
  const graphProblem = graphFlagsProblem(opts, cmd);
  if (graphProblem !== null) {
    cmd.error(`error: ${graphProblem}`, { exitCode: EXIT.usage });
    return;
  }
  let graph: Workload | null = null;
  if (opts.graph !== undefined) {
    // What a graph module writes to stdout as it loads (a console.log) goes to stderr, as
    // under weft run: on stdout it went ahead of the results, a line --json does not parse.
    const diversion = divertStdout(process.stdout, ctx.stderr);
    try {
      // On a terminal, a - typed by mistake waited without a word, as weft run's did.
      graph = await loadSimGraph(
        { ...opts, graph: opts.graph },
        {
          stream: process.stdin,
          onTerminal: () =>
            ctx.stderr.write("weft sim: reading a JSON graph from stdin: end it with Ctrl-D\n"),
        },
      );
    } catch (e) {
      if (!(e instanceof GraphInputError)) throw e;
      cmd.error(`error: --graph ${e.message}`, { exitCode: EXIT.usage });
      return;
    } finally {
      diversion.restore();
    }
  }
  // A share of requests the workload never makes (or of restarts it never makes) would
  // be ignored, unsaid: the run would look as if it had tried them.
  const idle = optionsWithoutEffect(graph ?? opts.workload);
  for (const name of idle.options) {
    if (opts[name] !== undefined) {
      cmd.error(`error: ${SIM_OPTION_FLAGS[name]} ${idle.why}`, { exitCode: EXIT.usage });
      return;
    }
  }
  // With --runs, --seed is the first seed unless --from names it: both would drop one.
  if (opts.from !== undefined && cmd.getOptionValueSource("seed") === "cli") {
    cmd.error("error: --seed and --from both name the first seed of --runs: give one", {
      exitCode: EXIT.usage,
    });
    return;
  }
  // Every seed of --runs must be a valid seed: checked before running any, so the
  // last ones do not end the batch with a RangeError's stack.
  if (opts.runs !== undefined && seedsPassSafeRange(opts.from ?? opts.seed, opts.runs)) {
    cmd.error(
      `error: the seeds of --runs must stay within ${Number.MAX_SAFE_INTEGER} (seeds are safe integers)`,
      { exitCode: EXIT.usage },
    );
    return;
  }
  let base: Omit<SimOptions, "seed">;
  try {
    base = simOptionsOf(opts, graph);
    resolveSimOptions({ ...base, seed: opts.seed }); // checks them together, before running
  } catch (e) {
    cmd.error(`error: ${withSimFlags((e as Error).message)}`, { exitCode: EXIT.usage });
    return;
  }
  const idleFaults = faultsThatCannotFire(base);
  if (idleFaults.length > 0) {
    // Else the run looked as if it had survived them.
    ctx.stderr.write(
      `weft sim: note: with --workers 1, ${idleFaults.join(" and ")} never ${idleFaults.length > 1 ? "fire" : "fires"} (at least one worker always survives): give --workers 2 or more to test ${idleFaults.length > 1 ? "them" : "it"}\n`,
    );
  }
  if (opts.runs === undefined) await runOne(ctx, opts, base);
  else await runMany(ctx, opts, base, opts.runs, opts.from ?? opts.seed);
}
