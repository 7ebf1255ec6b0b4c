/**
 * `weft bench state|cluster`: the benchmarks of `npm run bench:state` and
 * `npm run bench:cluster` (src/bench/), from the installed command, on this
 * machine. Each runs in a child node process with the V8 flags the npm
 * scripts give (`--expose-gc` and the heap sizes), so that its figures are
 * those of the scripts; the options are checked before the child starts.
 *
 * The benchmarks themselves are imported only in that child: the cluster
 * benchmark's task module defines `inc`, `add`, … in the process's task
 * registry, where a user's task module run by `weft run` may define its own.
 */

import { spawn } from "node:child_process";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import {
  CLUSTER_BENCH_NODE_FLAGS,
  type ClusterBenchCliOptions,
  type ClusterBenchOptions,
  clusterBenchCommand,
  clusterBenchOptions,
} from "../../bench/clusterBenchCommand.ts";
import {
  STATE_BENCH_NODE_FLAGS,
  type StateBenchCliOptions,
  type StateBenchOptions,
  stateBenchCommand,
  stateBenchOptions,
} from "../../bench/stateBenchCommand.ts";
import { exitCodeOf, UsageError } from "../../util/usageError.ts";
import { type CliContext, EXIT } from "./context.ts";
import { commandDescription } from "./index.ts";
import { addTlsOptions, type TlsCliOptions } from "./serverOptions.ts";

/** The `weft` command of this package (sources through tsx in a checkout, else the build). */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/** Set in the environment of the child a benchmark runs in: it is that child. */
const BENCH_CHILD = "WEFT_BENCH_CHILD";

/**
 * The options of `cmd` given on the command line, as arguments again (for the
 * child): defaults are left for the child to apply.
 */
export function givenOptionArgs(cmd: Command): string[] {
  const args: string[] = [];
  for (const opt of cmd.options) {
    const key = opt.attributeName();
    if (cmd.getOptionValueSource(key) !== "cli" || opt.long === undefined) continue;
    const value: unknown = cmd.getOptionValue(key);
    if (typeof value === "boolean") args.push(opt.long);
    else args.push(opt.long, String(value));
  }
  return args;
}

/**
 * Run `weft bench ARGS` in a child node process with `flags`, its output
 * written through `ctx`; its exit code (128 + the signal's number if a
 * signal ended it). SIGINT and SIGTERM this process gets go on to the child.
 */
async function inChild(ctx: CliContext, flags: readonly string[], args: string[]): Promise<number> {
  const child = spawn(process.execPath, [...flags, WEFT_BIN, "bench", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, [BENCH_CHILD]: "1" },
  });
  child.stdout.setEncoding("utf8").on("data", (s: string) => ctx.stdout.write(s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => ctx.stderr.write(s));
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on("SIGINT", forward).on("SIGTERM", forward);
  try {
    return await new Promise<number>((resolve) => {
      child.once("error", (err) => {
        ctx.stderr.write(`weft bench: cannot start node for the benchmark: ${err.message}\n`);
        resolve(EXIT.differences);
      });
      child.once("close", (code, signal) => {
        resolve(code ?? 128 + (signal !== null ? constants.signals[signal] : 0));
      });
    });
  } finally {
    process.off("SIGINT", forward).off("SIGTERM", forward);
  }
}

/** True in the child a benchmark runs in. */
function inBenchChild(): boolean {
  return process.env[BENCH_CHILD] === "1";
}

function say(ctx: CliContext, what: string, err: unknown): void {
  ctx.stderr.write(`weft bench ${what}: ${err instanceof Error ? err.message : String(err)}\n`);
}

/** One benchmark of `weft bench`. */
interface Benchmark<C, O> {
  /** Its subcommand's name. */
  readonly name: string;
  /** Its command line, without an action. */
  readonly command: Command;
  readonly description: string;
  /** The V8 flags its child runs with. */
  readonly nodeFlags: readonly string[];
  /** The options commander parsed, checked; throws (rejects) with an error naming the flag. */
  readonly check: (opts: C) => O | Promise<O>;
  /** Run it (in the child) and give the exit code. */
  readonly run: (options: O, ctx: CliContext) => Promise<number>;
}

/** The subcommand of `benchmark`: options checked here, the benchmark run in the child. */
function benchSubcommand<C, O>(ctx: CliContext, benchmark: Benchmark<C, O>): Command {
  return benchmark.command
    .description(benchmark.description)
    .action(async (opts: C, cmd: Command) => {
      let options: O;
      try {
        options = await benchmark.check(opts);
      } catch (err) {
        say(ctx, benchmark.name, err);
        ctx.exitCode = EXIT.usage;
        return;
      }
      ctx.exitCode = inBenchChild()
        ? await benchmark.run(options, ctx)
        : await inChild(ctx, benchmark.nodeFlags, [benchmark.name, ...givenOptionArgs(cmd)]);
    });
}

const stateBenchmark = (): Benchmark<StateBenchCliOptions, StateBenchOptions> => ({
  name: "state",
  command: stateBenchCommand("state"),
  description:
    "The worker state machine alone: replay recorded stimulus streams (../shared/bench) with validation off; events/s, transitions/s, heap bytes a task",
  nodeFlags: STATE_BENCH_NODE_FLAGS,
  check: stateBenchOptions,
  run: async (options, ctx) => {
    const { runStateBench } = await import("../../bench/stateBench.ts");
    try {
      return runStateBench(options, ctx, "weft bench state");
    } catch (err) {
      say(ctx, "state", err);
      // As npm run bench:state ends: a stream it cannot find or read, or a Python it
      // cannot run, is a usage error (2); the reference's replay ending elsewhere, or
      // anything else, a failure (1).
      return exitCodeOf(err);
    }
  },
});

const clusterBenchmark = (): Benchmark<
  ClusterBenchCliOptions & TlsCliOptions,
  ClusterBenchOptions
> => ({
  name: "cluster",
  command: addTlsOptions(
    clusterBenchCommand("cluster", "the credentials of --tls-ca-file, --tls-cert and --tls-key"),
  ),
  description:
    "Whole local clusters (2 workers × 1 thread) on Dask's benchmark graphs: tasks/s, each answer checked",
  nodeFlags: CLUSTER_BENCH_NODE_FLAGS,
  // Imported here, not with the definition: TLS and the comm layer are not for the help.
  check: async (opts) => {
    const { tlsFrom } = await import("./serveUntil.ts");
    const { tls } = tlsFrom(opts);
    if (opts.protocol === "tls" && tls === undefined) {
      throw new UsageError("--protocol tls needs --tls-ca-file, --tls-cert and --tls-key");
    }
    // Never silently unused: given, they meant the cluster to speak TLS.
    if (opts.protocol !== "tls" && tls !== undefined) {
      throw new UsageError("--tls-ca-file, --tls-cert and --tls-key are for --protocol tls");
    }
    return clusterBenchOptions(opts, tls);
  },
  run: async (options, ctx) => {
    const { benchCluster } = await import("../../bench/clusterBench.ts");
    try {
      await benchCluster(
        options,
        (record) => ctx.stdout.write(`${JSON.stringify(record)}\n`),
        (line) => ctx.stderr.write(`${line}\n`),
      );
      return EXIT.ok;
    } catch (err) {
      // A wrong answer, or a cluster that would not start: 1, as npm run bench:cluster ends.
      say(ctx, "cluster", err);
      return exitCodeOf(err);
    }
  },
});

/** `weft bench`: see docs/benchmarks.md. */
export function benchCommand(ctx: CliContext): Command {
  return new Command("bench")
    .description(commandDescription("bench"))
    .addHelpText(
      "after",
      "\nThe same benchmarks as npm run bench:state and npm run bench:cluster, in a child node\nprocess with their V8 flags. See docs/benchmarks.md for how to read the figures.",
    )
    .addCommand(benchSubcommand(ctx, stateBenchmark()))
    .addCommand(benchSubcommand(ctx, clusterBenchmark()));
}
