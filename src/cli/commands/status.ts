/**
 * `weft status <scheduler>`: what a running scheduler has, as a client sees it:
 * its workers (threads, status, tasks assigned, results held, and spilled to
 * disk when they have a memory limit), its counters and the datasets
 * published. A table, or JSON with `--json`.
 */

import { Command } from "commander";
import {
  addConnectOptions,
  addSchedulerArgument,
  type ConnectCliOptions,
} from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";

/** `weft status`: see docs/client.md. */
export function statusCommand(ctx: CliContext): Command {
  return addConnectOptions(
    addSchedulerArgument(new Command("status").description(commandDescription("status"))),
  )
    .option("--json", "print JSON instead of a table")
    .action(async (address: string | undefined, opts: ConnectCliOptions & { json?: boolean }) => {
      const { runStatus } = await import("./statusAction.ts");
      await runStatus(address, opts, ctx);
    });
}
