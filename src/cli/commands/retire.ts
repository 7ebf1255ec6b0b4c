/**
 * `weft retire <scheduler> [worker...] | --n N`: take workers out of a running
 * cluster without losing their results (Dask's `retire_workers`): the ones
 * named (addresses or hosts), or N the scheduler picks. Each retired worker is
 * told to close, and a `weft worker` process exits 0.
 */

import { Command } from "commander";
import { type CliContext, EXIT } from "./context.ts";
import { positiveInt } from "./serveUntil.ts";
import { type ConnectCliOptions, withClient } from "./status.ts";

/** Options of `weft retire`. */
export interface RetireCliOptions extends ConnectCliOptions {
  readonly n?: string;
  readonly json?: boolean;
}

/** `weft retire ADDRESS [WORKER...]`. */
export async function runRetire(
  address: string,
  workers: readonly string[],
  opts: RetireCliOptions,
  ctx: CliContext,
): Promise<void> {
  let which: readonly string[] | { n: number };
  try {
    if (opts.n !== undefined && workers.length > 0)
      throw new Error("give workers or --n, not both");
    if (opts.n === undefined && workers.length === 0) {
      throw new Error("name the workers to retire (addresses or hosts), or give --n");
    }
    which = opts.n !== undefined ? { n: positiveInt("--n", opts.n) } : workers;
  } catch (err) {
    ctx.stderr.write(`weft retire: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  await withClient("retire", address, opts, ctx, async (client) => {
    const { retired, failed } = await client.retireWorkers(which);
    if (opts.json === true) {
      ctx.stdout.write(`${JSON.stringify({ retired, failed }, null, 2)}\n`);
    } else {
      for (const w of retired) ctx.stdout.write(`retired ${w}\n`);
      for (const f of failed) ctx.stdout.write(`not retired ${f.worker}: ${f.reason}\n`);
    }
    if (failed.length > 0) ctx.exitCode = EXIT.differences;
  });
}

/** `weft retire`: see docs/client.md. */
export function retireCommand(ctx: CliContext): Command {
  return new Command("retire")
    .description(
      "Take workers out of a running cluster without losing their results; each retired worker closes",
    )
    .argument("<scheduler>", "the scheduler's address (tcp://host:port)")
    .argument("[workers...]", "the workers to retire: addresses, or hosts for every worker there")
    .option("--n <n>", "retire this many workers, picked by the scheduler (idle, holding least)")
    .option(
      "--connect-timeout <ms>",
      "how long to wait for the scheduler to accept the connection (default: 10000)",
    )
    .option("--json", "print JSON ({retired, failed}) instead of lines")
    .addHelpText(
      "after",
      "\nExit code: 0 if every worker was retired, 1 if one could not be (its reason is printed), 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string, workers: string[], opts: RetireCliOptions) => {
      await runRetire(address, workers, opts, ctx);
    });
}
