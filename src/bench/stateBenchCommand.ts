/**
 * The command line of the state machine benchmark (`npm run bench:state`, `weft
 * bench state`): its options, checked, and the V8 flags it runs with. Apart from
 * the benchmark itself (`stateBench.ts`), so that `weft` loads the benchmark only
 * when it runs it.
 */

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { UsageError } from "../util/usageError.ts";
import { nonNegativeInteger, positiveInteger } from "./benchOptions.ts";

/**
 * The V8 flags the benchmark runs with: `gc()` to collect the previous replay's state
 * machine before each run, and a 64 MB young generation (see docs/benchmarks.md).
 */
export const STATE_BENCH_NODE_FLAGS: readonly string[] = [
  "--expose-gc",
  "--max-semi-space-size=64",
];

/** Where the benchmark writes: JSON lines to `stdout`, progress and notes to `stderr`. */
export interface BenchOutput {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** The reference's replay script, in a checkout of weft (not in its package). */
export const REFERENCE_SCRIPT = fileURLToPath(
  new URL("../../tools/oracle/bench_reference.py", import.meta.url),
);

/** The options of the benchmark as commander gives them (see {@link stateBenchCommand}). */
export interface StateBenchCliOptions {
  readonly dir: string;
  readonly runs: string;
  readonly warmup: string;
  readonly streams?: string;
  readonly tasks: string;
  readonly referenceHere?: boolean;
  readonly python: string;
}

/** The benchmark's options, checked. */
export interface StateBenchOptions {
  readonly dir: string;
  readonly runs: number;
  readonly warmup: number;
  /** The streams to replay; undefined: every one in `dir`. */
  readonly streams?: readonly string[];
  /** Tasks held for the memory measurement; 0 skips it. */
  readonly tasks: number;
  /** The Python that times the reference on each stream too; undefined: not timed. */
  readonly referenceWith?: string;
}

/**
 * A command named `name` with the benchmark's options and help, without an
 * action: `npm run bench:state` and `weft bench state` each add theirs.
 */
export function stateBenchCommand(name: string): Command {
  return new Command(name)
    .description(
      "Replay recorded stimulus streams (../shared/bench) through the worker state machine, validation off, and measure its memory",
    )
    .option("--dir <dir>", "directory of *.jsonl.gz streams", "../shared/bench")
    .option("--runs <n>", "timed runs per stream (median reported)", "5")
    .option("--warmup <n>", "untimed runs per stream before the timed ones", "1")
    .option("--streams <names>", "comma-separated stream names (default: all)")
    .option(
      "--tasks <n>",
      "tasks held for the memory measurement (0 to skip; at most 4,000,000)",
      "1000000",
    )
    .option(
      "--reference-here",
      "also time the reference (python3, tools/oracle/bench_reference.py, in a checkout of weft) on each stream, " +
        "right after weft, and give the ratio of the two",
    )
    .option("--python <exe>", "the Python 3.10+ for --reference-here", "python3")
    .addHelpText(
      "after",
      `\nOne JSON line per stream (events/s, transitions/s: the median of the timed runs;
its final check against the stream's last line) and one for the heap bytes a task.
Runs node with ${STATE_BENCH_NODE_FLAGS.join(" ")}.

Exit codes: 0 every replay ended as its stream says; 1 one did not (the reference's
with --reference-here included), or the run failed; 2 bad options, no *.jsonl.gz
stream in --dir, a stream it cannot name or read, or a Python it cannot run.`,
    );
}

/**
 * The most tasks `--tasks` may hold: about 580 heap bytes each, 4,000,000 take 2.3 GB
 * of node's default heap limit (4 GB on a 64-bit machine with memory to spare);
 * 20,000,000 ended the benchmark, after its streams, in V8's out-of-memory abort.
 */
export const MAX_MEMORY_TASKS = 4_000_000;

/** The options commander parsed, checked; throws an error naming the flag. */
export function stateBenchOptions(opts: StateBenchCliOptions): StateBenchOptions {
  const runs = positiveInteger(opts.runs, "--runs");
  const warmup = nonNegativeInteger(opts.warmup, "--warmup");
  const tasks = nonNegativeInteger(opts.tasks, "--tasks");
  if (tasks > MAX_MEMORY_TASKS) {
    throw new UsageError(
      `--tasks must be at most ${MAX_MEMORY_TASKS} (about 580 heap bytes a task), got ${tasks}`,
    );
  }
  const streams = opts.streams
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (streams !== undefined && streams.length === 0) {
    throw new UsageError("--streams names no stream");
  }
  if (opts.referenceHere === true && !existsSync(REFERENCE_SCRIPT)) {
    throw new UsageError(
      `--reference-here needs a checkout of weft, with ${REFERENCE_SCRIPT} (and ../shared/reference beside it)`,
    );
  }
  if (opts.referenceHere === true) {
    // Found out only once weft had replayed the first stream, timed runs and all.
    const child = spawnSync(opts.python, ["--version"], { encoding: "utf8" });
    if (child.error !== undefined || child.status !== 0) {
      throw new UsageError(
        `--python ${opts.python}: cannot run it${child.error === undefined ? ` (exit ${child.status})` : `: ${child.error.message}`}`,
      );
    }
  }
  return {
    dir: opts.dir,
    runs,
    warmup,
    ...(streams !== undefined ? { streams } : {}),
    tasks,
    ...(opts.referenceHere === true ? { referenceWith: opts.python } : {}),
  };
}
