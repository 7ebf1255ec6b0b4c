/**
 * `weft retire <scheduler> [worker...] | --n N | --idle`: take workers out of
 * a running cluster without losing their results (Dask's `retire_workers`):
 * the ones named (addresses, hosts or names), N the scheduler picks, or the idle
 * ones it can spare. Each retired worker is told to close, and a `weft
 * worker` process exits 0.
 */

import { Command } from "commander";
import { addConnectOptions, type ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { leadingScheduler, SCHEDULER_ARGUMENT, schedulerChoiceProblem } from "./schedulerChoice.ts";
import { positiveInt } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";
import { selectorsProblem, WORKER_SELECTOR, withSchemes } from "./workerSelectors.ts";

/** Options of `weft retire`. */
export interface RetireCliOptions extends ConnectCliOptions {
  readonly n?: string;
  readonly idle?: boolean;
  readonly json?: boolean;
}

/** `weft retire [ADDRESS] [WORKER...]`: `args`, the address first unless `--scheduler-file`. */
export async function runRetire(
  args: readonly string[],
  opts: RetireCliOptions,
  ctx: CliContext,
): Promise<void> {
  const scheduler = leadingScheduler(args, opts.schedulerFile);
  const workers = scheduler.others;
  let which: readonly string[] | { n: number } | undefined;
  try {
    const unnamed = schedulerChoiceProblem(scheduler.given, opts.schedulerFile);
    if (unnamed !== null) throw new Error(unnamed);
    const given =
      (workers.length > 0 ? 1 : 0) + (opts.n !== undefined ? 1 : 0) + (opts.idle ? 1 : 0);
    if (given > 1) throw new Error("give workers, --n or --idle, only one of them");
    const badSelector = selectorsProblem(workers);
    if (badSelector !== null) throw new Error(badSelector);
    if (given === 0) {
      throw new Error(
        "name the workers to retire (addresses, hosts or names), or give --n or --idle",
      );
    }
    which =
      opts.n !== undefined ? { n: positiveInt("--n", opts.n) } : opts.idle ? undefined : workers;
  } catch (err) {
    ctx.stderr.write(`weft retire: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  await withClient("retire", scheduler, opts, ctx, async (client) => {
    const named = Array.isArray(which) ? await withSchemes(client, which) : which;
    const { retired, failed } = await client.retireWorkers(named);
    if (opts.json === true) {
      ctx.stdout.write(`${JSON.stringify({ retired, failed }, null, 2)}\n`);
    } else {
      for (const w of retired) ctx.stdout.write(`retired ${w}\n`);
      for (const f of failed) ctx.stdout.write(`not retired ${f.worker}: ${f.reason}\n`);
      // --n or --idle on a cluster that can spare none: said, rather than nothing printed.
      if (retired.length === 0 && failed.length === 0) {
        ctx.stdout.write("no worker retired: the scheduler found none it could spare\n");
      }
    }
    if (failed.length > 0) ctx.exitCode = EXIT.differences;
  });
}

/** `weft retire`: see docs/client.md. */
export function retireCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("retire"))
    .description(
      "Take workers out of a running cluster without losing their results; each retired worker closes",
    )
    .argument("[scheduler]", SCHEDULER_ARGUMENT)
    .argument("[workers...]", `the workers to retire, each ${WORKER_SELECTOR}`)
    .option(
      "--n <n>",
      "retire this many workers, picked by the scheduler: those running fewest tasks (none first), then holding fewest bytes; never one running a long-running task",
    )
    .option(
      "--idle",
      "retire the idle workers the cluster can spare: running no task, fewest bytes first, while the memory limits of those left add up to twice the bytes held (without limits: all of them if nothing is held, else none)",
    )
    .option("--json", "print JSON ({retired, failed}) instead of lines")
    .addHelpText(
      "after",
      "\nExit code: 0 if every worker was retired, 1 if one could not be (its reason is printed) or the scheduler is lost before it answers, 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, workers: string[], opts: RetireCliOptions) => {
      await runRetire(address === undefined ? workers : [address, ...workers], opts, ctx);
    });
}
