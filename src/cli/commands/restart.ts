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
import { addConnectOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { MILLISECONDS_FORMS } from "./millisecondsOption.ts";
import type { RestartCliOptions } from "./restartAction.ts";
import { SCHEDULER_ARGUMENT } from "./schedulerChoice.ts";
import { WORKER_SELECTOR } from "./workerSelectors.ts";

/** `weft restart`: see docs/client.md. */
export function restartCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("restart"))
    .description(commandDescription("restart"))
    .argument("[scheduler]", SCHEDULER_ARGUMENT)
    .argument(
      "[workers...]",
      `restart only these workers, each ${WORKER_SELECTOR}, and each with a nanny; the work goes on`,
    )
    .option(
      "--timeout <ms|duration>",
      `how long to wait for as many workers as there were to come back (${MILLISECONDS_FORMS}; default: 30000)`,
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
        "restarted, 2 for bad usage or a scheduler that cannot be reached, 130 (143) interrupted\n" +
        "by SIGINT (SIGTERM): it says whether the restart had been asked, which then goes on.",
    )
    .action(async (address: string | undefined, workers: string[], opts: RestartCliOptions) => {
      await (await import("./restartAction.ts")).runRestart(
        address === undefined ? workers : [address, ...workers],
        opts,
        ctx,
      );
    });
}
