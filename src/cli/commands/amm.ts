/**
 * `weft amm start|stop|status|run-once <scheduler>`: operate a running
 * scheduler's Active Memory Manager as `client.amm` does (Dask's
 * `client.amm`): start its rounds (also where the scheduler was started with
 * `--no-active-memory-manager`), stop them, say whether they run, or run one
 * round now. Each prints one line.
 */

import { Command } from "commander";
import type { AmmAction } from "./ammAction.ts";
import {
  addConnectOptions,
  addSchedulerArgument,
  type ConnectCliOptions,
} from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";

const EXIT_CODES =
  "\nExit code: 0 once the scheduler has answered, 1 if it is lost before it answers, 2 for bad usage or a scheduler that cannot be reached.";

/** One subcommand of `weft amm`. */
function ammSubcommand(
  ctx: CliContext,
  action: AmmAction,
  description: string,
  help: string,
): Command {
  return addConnectOptions(addSchedulerArgument(new Command(action)))
    .description(description)
    .addHelpText("after", `\n${help}\n${EXIT_CODES}`)
    .action(async (address: string | undefined, opts: ConnectCliOptions) => {
      await (await import("./ammAction.ts")).runAmm(action, address, opts, ctx);
    });
}

/** `weft amm`: see docs/client.md. */
export function ammCommand(ctx: CliContext): Command {
  return new Command("amm")
    .description(commandDescription("amm"))
    .addHelpText(
      "after",
      "\nThe active memory manager drops the replicas of results that no task needs. A scheduler\n" +
        "runs a round of it every --active-memory-manager-interval ms (2000) unless started with\n" +
        "--no-active-memory-manager; these commands change that while it runs, as client.amm does.",
    )
    .addCommand(
      ammSubcommand(
        ctx,
        "start",
        "Run a round every interval (the scheduler's --active-memory-manager-interval) from now on",
        "Also where the scheduler was started with --no-active-memory-manager; nothing if the\n" +
          "rounds run already. Prints the status: active memory manager: running (every 2000 ms).",
      ),
    )
    .addCommand(
      ammSubcommand(
        ctx,
        "stop",
        "Run no more periodic rounds",
        "Nothing if none run; `weft amm run-once` still runs one. Prints the status:\n" +
          "active memory manager: stopped.",
      ),
    )
    .addCommand(
      ammSubcommand(
        ctx,
        "status",
        "Say whether the rounds run, and how often",
        "Prints active memory manager: running (every 2000 ms), or: stopped.",
      ),
    )
    .addCommand(
      ammSubcommand(
        ctx,
        "run-once",
        "Run one round now, whether the periodic rounds run or not",
        "Prints how many replicas the round asked workers to drop (never from a worker that a\n" +
          "task needing the key is queued or executing on, and never the last one).",
      ),
    );
}
