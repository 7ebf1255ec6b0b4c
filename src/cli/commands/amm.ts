/**
 * `weft amm start|stop|status|run-once <scheduler>`: operate a running
 * scheduler's Active Memory Manager as `client.amm` does (Dask's
 * `client.amm`): start its rounds (also where the scheduler was started with
 * `--no-active-memory-manager`), stop them, say whether they run, or run one
 * round now. Each prints one line.
 */

import { Command } from "commander";
import type { AmmStatus } from "../../protocol/messagesSession.ts";
import {
  addConnectOptions,
  addSchedulerArgument,
  type ConnectCliOptions,
} from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { withClient } from "./withClient.ts";

/** What `weft amm` can do, each a subcommand. */
export type AmmAction = "start" | "stop" | "status" | "run-once";

/** The line `weft amm` prints for `status`. */
export function formatAmmStatus(status: AmmStatus): string {
  return status.running
    ? `active memory manager: running (every ${status.intervalMs} ms)`
    : "active memory manager: stopped";
}

/** The line `weft amm run-once` prints for a round that asked workers to drop `dropped` replicas. */
export function formatAmmRound(dropped: number): string {
  return dropped === 0
    ? "active memory manager: ran one round; no replica to drop"
    : `active memory manager: ran one round; asked workers to drop ${dropped} replica${dropped === 1 ? "" : "s"}`;
}

/** `weft amm ACTION [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runAmm(
  action: AmmAction,
  address: string | undefined,
  opts: ConnectCliOptions,
  ctx: CliContext,
): Promise<void> {
  await withClient(`amm ${action}`, { given: address }, opts, ctx, async (client) => {
    if (action === "run-once") {
      ctx.stdout.write(`${formatAmmRound(await client.amm.runOnce())}\n`);
      return;
    }
    const status =
      action === "start"
        ? await client.amm.start()
        : action === "stop"
          ? await client.amm.stop()
          : await client.amm.status();
    ctx.stdout.write(`${formatAmmStatus(status)}\n`);
  });
}

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
      await runAmm(action, address, opts, ctx);
    });
}

/** `weft amm`: see docs/client.md. */
export function ammCommand(ctx: CliContext): Command {
  return new Command("amm")
    .description(
      "Operate a running scheduler's active memory manager (ReduceReplicas): start, stop, status, run-once",
    )
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
