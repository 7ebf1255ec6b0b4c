/**
 * `weft retire <scheduler> [worker...] | --n N | --idle`: take workers out of
 * a running cluster without losing their results (Dask's `retire_workers`):
 * the ones named (addresses, hosts or names), N the scheduler picks, or the idle
 * ones it can spare. Each retired worker is told to close, and a `weft
 * worker` process exits 0.
 */

import { Command } from "commander";
import { addConnectOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import type { RetireCliOptions } from "./retireAction.ts";
import { SCHEDULER_ARGUMENT } from "./schedulerChoice.ts";
import { WORKER_SELECTOR } from "./workerSelectors.ts";

/** `weft retire`: see docs/client.md. */
export function retireCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("retire"))
    .description(commandDescription("retire"))
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
      "\nExit code: 0 if every worker was retired, 1 if one could not be (its reason is printed) or the scheduler is lost before it answers, 2 for bad usage or a scheduler that cannot be reached, 130 (143) interrupted by SIGINT (SIGTERM): it says whether the retirement had been asked, which then goes on.",
    )
    .action(async (address: string | undefined, workers: string[], opts: RetireCliOptions) => {
      await (await import("./retireAction.ts")).runRetire(
        address === undefined ? workers : [address, ...workers],
        opts,
        ctx,
      );
    });
}
