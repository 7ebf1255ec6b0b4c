/**
 * `weft sim`: run simulated clusters (see docs/sim.md). One seed prints its
 * run, and in full if it fails, with the command that replays it and the
 * smallest failing case shrinking finds; `--runs COUNT --from SEED` runs
 * consecutive seeds and closes with `N passed, M failed`.
 */

import { Command, InvalidArgumentError, Option } from "commander";
import { FAULT_DESCRIPTIONS, FAULT_KINDS } from "../../sim/faults.ts";
import { MAX_SIM_WORKERS, SIM_WORKLOAD_KINDS } from "../../sim/options.ts";
import { VARIANTS } from "../../sim/variants.ts";
import {
  WHOLE_CHECK_EVERY_STIMULUS_UP_TO,
  WHOLE_CHECK_TASKS_PER_STIMULUS,
} from "../../sim/wholeStateChecks.ts";
import { parseDecimal } from "../../util/decimal.ts";
import { beyondExactIntegers, EXACT_INTEGER_BOUND } from "../../util/exactInteger.ts";
import { parseBytes } from "../../util/parseBytes.ts";
import { parseTimedelta } from "../../util/parseTimedelta.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { joinRepeatedList } from "./repeatedList.ts";
import type { SimCliOptions } from "./simAction.ts";

function integer(min: number): (v: string) => number {
  return (v) => {
    // Not Number: an empty --seed must not run seed 0 unnoticed, nor 0x10 seed 16.
    const n = parseDecimal(v);
    if (beyondExactIntegers(n)) {
      throw new InvalidArgumentError(`expected an integer ${EXACT_INTEGER_BOUND}, got '${v}'`);
    }
    if (!Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected an integer ≥ ${min}, got '${v}'`);
    }
    return n;
  };
}

/** A duration in virtual seconds, bare (`0.002`) or with a unit as Dask writes one. */
function parseSeconds(v: string): number {
  try {
    return parseTimedelta(v);
  } catch (err) {
    throw new InvalidArgumentError(
      `expected seconds or a duration such as 2ms, 0.5s or 1m, got '${v}': ${(err as Error).message}`,
    );
  }
}

/**
 * Virtual seconds, bare (`0.002`) or with a unit as Dask writes a duration (`2ms`,
 * `0.1s`, `1m`): the scheduler's options of the same names take milliseconds or
 * a unit, so a unit reads the same in both.
 */
function seconds(v: string): number {
  const n = parseSeconds(v);
  if (!(n > 0) || !Number.isFinite(n)) {
    throw new InvalidArgumentError(`expected a duration > 0, got '${v}'`);
  }
  return n;
}

/**
 * Bytes per virtual second, as Dask writes a size (`100MB`, `10MiB`), or a bare
 * number of bytes read as it is, with `/s` after it if wanted (`100MB/s`).
 */
function bytesPerSecond(v: string): number {
  const expected = `expected bytes per virtual second such as 100MB, 10MiB/s or 5e6, got '${v}'`;
  // `/S` too: a size's unit is read in any case, as Dask's parse_bytes reads it.
  const size = v.replace(/\/s$/i, "");
  // parse_bytes reads no number as 1: `--bandwidth ""` (an unset variable) ran at 1 B/s.
  if (size.trim() === "") throw new InvalidArgumentError(expected);
  // Not truncated, as parse_bytes truncates: the replay line of a run given a fraction
  // (from a program) prints it so, and read as a whole number it replayed another run.
  let n = parseDecimal(size);
  if (Number.isNaN(n)) {
    try {
      n = parseBytes(size);
    } catch (err) {
      throw new InvalidArgumentError(`${expected}: ${(err as Error).message}`);
    }
  }
  if (!(n > 0)) throw new InvalidArgumentError(`expected bytes per second > 0, got '${v}'`);
  if (!Number.isFinite(n)) {
    throw new InvalidArgumentError(`expected a finite number of bytes per second, got '${v}'`);
  }
  return n;
}

/**
 * A graph task's mean compute time: as {@link seconds}, but 0 too (tasks that take
 * no time, as a graph's "sim" field and graphWorkload allow), to test scheduling alone.
 */
function taskSeconds(v: string): number {
  const n = parseSeconds(v);
  if (!(n >= 0) || !Number.isFinite(n)) {
    throw new InvalidArgumentError(`expected a duration ≥ 0, got '${v}'`);
  }
  return n;
}

/** A task's result size in bytes, as Dask writes a size (`1MB`, `64KiB`, a bare number). */
function bytes(v: string): number {
  let n: number;
  try {
    n = parseBytes(v);
  } catch (err) {
    throw new InvalidArgumentError(
      `expected bytes such as 1MB, 64KiB or 5e6, got '${v}': ${(err as Error).message}`,
    );
  }
  if (!(Number.isSafeInteger(n) && n >= 0)) {
    throw new InvalidArgumentError(`expected a whole number of bytes ≥ 0, got '${v}'`);
  }
  return n;
}

/** `--validate-every`: `auto`, or an integer ≥ 1. */
function validateEvery(v: string): number | "auto" {
  if (v === "auto") return v;
  try {
    return integer(1)(v);
  } catch {
    throw new InvalidArgumentError(`expected auto or an integer ≥ 1, got '${v}'`);
  }
}

function share(v: string): number {
  const n = parseDecimal(v);
  if (!(n >= 0 && n <= 1))
    throw new InvalidArgumentError(`expected a number from 0 to 1, got '${v}'`);
  return n;
}

const HELP_AFTER = [
  "",
  "Your own graph (--graph FILE): the graph files weft run takes, a JSON graph",
  '{key: [fn, ...args]} or {"graph": {...}, "keys": [...]}, or a module exporting',
  "graph (and keys). Its tasks keep their dependencies and function names, but the",
  "simulator does not run your functions: each task computes a checksum of its",
  "inputs, so a run tests how the cluster schedules the graph and survives faults,",
  "not what it computes. Every task runs --task-duration (default 50ms) and makes",
  '--task-nbytes (default 1MB), or by function name the wrapper\'s "sim" field sets:',
  '{"graph": {...}, "sim": {"load": {"duration": "2s", "nbytes": "50MB"}}}. Shrinking',
  "then shrinks workers, threads and faults, not the graph.",
  "",
  "Faults (--faults all | none | kind[=rate],… | all,kind=rate,…: all, those at their rates, =0 off):",
  ...FAULT_KINDS.map((k) => `  ${k.padEnd(11)} ${FAULT_DESCRIPTIONS[k]}`),
  "",
  "Broken variants (--variant NAME), to see the simulator catch a bug:",
  ...VARIANTS.map((v) => `  ${v.name.padEnd(23)} ${v.description}`),
  "",
  "With --runs, Ctrl-C (SIGINT) or SIGTERM stops after the seed running and prints the",
  "summary of the seeds run so far, with the first failure (not shrunk).",
  "",
  "Exit codes: 0 every run passed, 1 a run failed, 2 bad usage, 130 / 143 --runs",
  "stopped by SIGINT / SIGTERM. See docs/sim.md.",
].join("\n");

/** `weft sim`: see the module comment. */
export function simCommand(ctx: CliContext): Command {
  return new Command("sim")
    .description(commandDescription("sim"))
    .option("--seed <n>", "the seed of a single run", integer(0), 1)
    .option("--runs <count>", "run COUNT consecutive seeds", integer(1))
    .option("--from <seed>", "with --runs: the first seed (default: --seed)", integer(0))
    .addOption(
      new Option("--workload <kind>", "the graph the client submits")
        .choices(SIM_WORKLOAD_KINDS)
        .default("random"),
    )
    .option(
      "--tasks <n>",
      "workload size: tasks (random, pinned, scatter, map), leaves (tree), partitions (shuffle), length (chain), loads (configured); default 40",
      integer(1),
    )
    .option(
      "--graph <file>",
      "simulate this graph file (as weft run takes: .json, a module, or - for JSON on stdin) instead of a --workload; its functions are not run (see below)",
    )
    .option(
      "--task-duration <s|duration>",
      "with --graph: each task's mean compute time, in virtual seconds or such as 50ms, 0 or more (default 50ms)",
      taskSeconds,
    )
    .option(
      "--task-nbytes <bytes>",
      "with --graph: each task's result size, such as 1MB or 64KiB (default 1MB)",
      bytes,
    )
    .option(
      "--workers <n>",
      `workers at the start (default 4; at most ${MAX_SIM_WORKERS.toLocaleString("en-US")})`,
      integer(1),
    )
    .option("--max-threads <n>", "each worker gets 1..n threads (default 2)", integer(1))
    .option(
      "--outgoing-limit <n>",
      "transfers a worker serves at once before answering busy (default 2)",
      integer(1),
    )
    .option(
      "--incoming-limit <n>",
      "transfers a worker makes at once, once 10 MB are in flight, as in Dask (default 4)",
      integer(1),
    )
    .option(
      "--latency <s|duration>",
      "mean message latency, in virtual seconds or with a unit such as 2ms (default 0.002)",
      seconds,
    )
    .option(
      "--bandwidth <bytes/s>",
      "each link's bandwidth, bytes per virtual second, such as 10MB or 1MiB/s (default 100MB); a transfer takes latency + bytes / bandwidth",
      bytesPerSecond,
    )
    .option(
      "--replicate <share>",
      "runs with scattered data (scatter, and configured with its config scattered; refused with the other workloads): the share of runs whose client also replicates (default 0.5)",
      share,
    )
    .option(
      "--replicate-one <share>",
      "runs with scattered data (refused as --replicate is): the share of replicate requests asking for one copy, which drops the others (default 0.333…)",
      share,
    )
    .option(
      "--rebalance <share>",
      "runs with scattered data (refused as --replicate is): the share of the client's requests that are rebalances (default 0.25)",
      share,
    )
    .option(
      "--retire <share>",
      "runs with scattered data (refused as --replicate is): the share of the other requests that retire a worker instead (default 0.1)",
      share,
    )
    .option(
      "--fire-and-forget <share>",
      "the share of runs whose client fires and forgets a wanted key, which must still run to its end (default 0.15)",
      share,
    )
    .option(
      "--restart <share>",
      "the share of runs whose client restarts the cluster once, then submits its graph again (not with scattered data: refused with --workload scatter; default 0.05)",
      share,
    )
    .option(
      "--restart-worker <share>",
      "the share of runs whose client restarts one worker while the work goes on (not with scattered data: refused with --workload scatter; default 0.05)",
      share,
    )
    .option(
      "--actors <share>",
      "the share of the workload's tasks that are actors, whose object stays on the worker that ran it (default 0.1; 0: the runs as they were before actors came)",
      share,
    )
    .option(
      "--faults <spec>",
      "which faults, and their rates; repeat for more (default: all)",
      joinRepeatedList,
    )
    .addOption(
      new Option("--variant <name>", "run a deliberately broken variant").choices(
        VARIANTS.map((v) => v.name),
      ),
    )
    .option(
      "--no-validate",
      "do not validate the machines (by default the tasks each stimulus changed after it, and each machine whole as --validate-every says)",
    )
    .option(
      "--validate-every <n|auto>",
      `check a machine's whole state after every N of its stimuli (1: after each); auto: after each in a run of at most ${WHOLE_CHECK_EVERY_STIMULUS_UP_TO.toLocaleString("en-US")} tasks, in a bigger one every size/${WHOLE_CHECK_TASKS_PER_STIMULUS} (a check costs as much as the machine is big); either way at the end of each phase too (default: auto)`,
      validateEvery,
    )
    .option(
      "--no-work-stealing",
      "the scheduler runs no rounds of work stealing (on by default, every 0.1 virtual s, as a real cluster); the steal fault still asks for random steals",
    )
    .option(
      "--work-stealing-interval <s|duration>",
      "virtual seconds between rounds of work stealing, or a duration such as 100ms; at least 0.001 (default 0.1, a real scheduler's)",
      seconds,
    )
    .option(
      "--no-active-memory-manager",
      "the scheduler runs no rounds of the active memory manager (on by default, every 2 virtual s, as a real cluster)",
    )
    .option(
      "--active-memory-manager-interval <s|duration>",
      "virtual seconds between rounds of the active memory manager, or a duration such as 2s; at least 0.001 (default 2, a real scheduler's)",
      seconds,
    )
    .option(
      "--no-release",
      "skip the final release phase (everything released, every machine empty)",
    )
    .option("--no-shrink", "do not look for a smaller failing case")
    .option("--verbose", "with --runs: one line per run")
    .option(
      "--dump <file>",
      "one run: write the cluster as it ended (or failed) as a cluster dump, for weft story and weft replay (.yaml, .yml, .yaml.gz, .yml.gz for YAML, else msgpack; .msgpack.gz added unless it ends in .msgpack[.gz])",
    )
    .option("--json", "print results as JSON lines")
    .addHelpText("after", HELP_AFTER)
    .action(async (opts: SimCliOptions, cmd: Command) => {
      await (await import("./simAction.ts")).runSim(opts, cmd, ctx);
    });
}
