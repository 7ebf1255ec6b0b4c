/**
 * `weft shutdown <scheduler>`: close a running cluster (Dask's
 * `Client.shutdown`): every worker is told to close, as when retired (a
 * `weft worker` exits 0, and its nanny does not start it again), then the
 * scheduler closes (`weft scheduler` exits 0).
 */

import { Command } from "commander";
import {
  addConnectOptions,
  addSchedulerArgument,
  type ConnectCliOptions,
} from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";

/** `weft shutdown`: see docs/client.md. */
export function shutdownCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("shutdown")))
    .description(commandDescription("shutdown"))
    .addHelpText(
      "after",
      "\nEvery worker closes as when retired (exit 0; a --nanny does not start it again), then\n" +
        "the scheduler (exit 0). Other clients lose the cluster: their futures fail.\n" +
        "Exit code: 0 once the scheduler has answered, 1 if it is lost before it answers, 2 for\n" +
        "bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, opts: ConnectCliOptions) => {
      await (await import("./shutdownAction.ts")).runShutdown(address, opts, ctx);
    });
}
