/**
 * `weft restart <scheduler> [worker...]`: restart a running cluster (Dask's
 * `Client.restart`). The scheduler forgets every task, every client's
 * futures are cancelled, and every worker closes; a `weft worker --nanny`
 * starts again, fresh, and one without a nanny exits 0 for good. With
 * workers named, only those restart (Dask's `restart_workers`), and the
 * work goes on. Waits until as many workers as there were are back, unless
 * `--no-wait`.
 */

import { Command } from "commander";
import { RestartTimeoutError } from "../../client/errors.ts";
import { addConnectOptions, type ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { leadingScheduler, SCHEDULER_ARGUMENT, schedulerChoiceProblem } from "./schedulerChoice.ts";
import { timeoutMs } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";
import { selectorsProblem, WORKER_SELECTOR, withSchemes } from "./workerSelectors.ts";

/** Options of `weft restart`. */
export interface RestartCliOptions extends ConnectCliOptions {
  readonly timeout?: string;
  readonly wait?: boolean;
}

/**
 * The timeout in the CLI's words: the error's own message advises the API's
 * options (timeoutMs, waitForWorkers), which weft restart takes as --timeout
 * and --no-wait.
 */
function restartTimeoutMessage(err: RestartTimeoutError): string {
  const { wanted, running, timeoutMs, nannies } = err;
  let message =
    `waited ${timeoutMs} ms for ${wanted} worker(s) to come back after the restart, but only ` +
    `${running} did (the restart itself is done): give a longer --timeout to wait longer, or --no-wait not to wait`;
  if (nannies < wanted) {
    message +=
      `; ${wanted - nannies} of them had no nanny, so they were closed rather than restarted: ` +
      "unless something starts them again (weft worker --nanny does), they never come back";
  }
  return message;
}

/** `weft restart [ADDRESS] [WORKER...]`: `args`, the address first unless `--scheduler-file`. */
export async function runRestart(
  args: readonly string[],
  opts: RestartCliOptions,
  ctx: CliContext,
): Promise<void> {
  const scheduler = leadingScheduler(args, opts.schedulerFile);
  const workers = scheduler.others;
  let timeout: number;
  try {
    const unnamed = schedulerChoiceProblem(scheduler.given, opts.schedulerFile);
    if (unnamed !== null) throw new Error(unnamed);
    timeout = timeoutMs("--timeout", opts.timeout ?? "30000");
    const badSelector = selectorsProblem(workers);
    if (badSelector !== null) throw new Error(badSelector);
  } catch (err) {
    ctx.stderr.write(`weft restart: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const wait = opts.wait !== false;
  await withClient("restart", scheduler, opts, ctx, async (client) => {
    try {
      if (workers.length > 0) {
        const { restarted, failed } = await client.restartWorkers(
          await withSchemes(client, workers),
          {
            timeoutMs: timeout,
            waitForWorkers: wait,
          },
        );
        for (const w of restarted) ctx.stdout.write(`restarted ${w}\n`);
        for (const f of failed) ctx.stdout.write(`not restarted ${f.worker}: ${f.reason}\n`);
        if (failed.length > 0) ctx.exitCode = EXIT.differences;
        return;
      }
      await client.restart({ timeoutMs: timeout, waitForWorkers: wait });
    } catch (err) {
      if (!(err instanceof RestartTimeoutError)) throw err;
      ctx.stderr.write(`weft restart: ${restartTimeoutMessage(err)}\n`);
      ctx.exitCode = EXIT.differences;
      return;
    }
    if (!wait) {
      ctx.stdout.write("restarted; the workers are starting again\n");
      return;
    }
    const n = (await client.workers()).length;
    ctx.stdout.write(`restarted; ${n} worker${n === 1 ? "" : "s"} running\n`);
  });
}

/** `weft restart`: see docs/client.md. */
export function restartCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("restart"))
    .description(
      "Restart a running cluster: forget every task, cancel every client's futures, start the workers afresh",
    )
    .argument("[scheduler]", SCHEDULER_ARGUMENT)
    .argument(
      "[workers...]",
      `restart only these workers, each ${WORKER_SELECTOR}, and each with a nanny; the work goes on`,
    )
    .option(
      "--timeout <ms>",
      "how long to wait for as many workers as there were to come back (default: 30000)",
    )
    .option("--no-wait", "return once the scheduler has restarted, without waiting for the workers")
    .addHelpText(
      "after",
      "\nA worker run with --nanny starts again; one without exits 0 and does not come back\n" +
        "unless something starts it again. With workers named, only those restart (each must\n" +
        "have a nanny): their unfinished tasks run elsewhere, and the results only they held\n" +
        "are computed again; it prints `restarted ADDRESS` or `not restarted ADDRESS: why`.\n" +
        "Exit code: 0 once the workers are back (or at once with --no-wait), 1 if they are not\n" +
        "back within --timeout, the scheduler is lost meanwhile or a worker named could not be\n" +
        "restarted, 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, workers: string[], opts: RestartCliOptions) => {
      await runRestart(address === undefined ? workers : [address, ...workers], opts, ctx);
    });
}
