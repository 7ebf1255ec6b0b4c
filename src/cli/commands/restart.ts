/**
 * `weft restart <scheduler>`: restart a running cluster (Dask's
 * `Client.restart`). The scheduler forgets every task, every client's
 * futures are cancelled, and every worker closes; a `weft worker --nanny`
 * starts again, fresh, and one without a nanny exits 0 for good. Waits until
 * as many workers as there were are back, unless `--no-wait`.
 */

import { Command } from "commander";
import { RestartTimeoutError } from "../../client/errors.ts";
import { type CliContext, EXIT } from "./context.ts";
import { timeoutMs } from "./serveUntil.ts";
import { type ConnectCliOptions, withClient } from "./status.ts";

/** Options of `weft restart`. */
export interface RestartCliOptions extends ConnectCliOptions {
  readonly timeout?: string;
  readonly wait?: boolean;
}

/** `weft restart ADDRESS`. */
export async function runRestart(
  address: string,
  opts: RestartCliOptions,
  ctx: CliContext,
): Promise<void> {
  let timeout: number;
  try {
    timeout = timeoutMs("--timeout", opts.timeout ?? "30000");
  } catch (err) {
    ctx.stderr.write(`weft restart: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const wait = opts.wait !== false;
  await withClient("restart", address, opts, ctx, async (client) => {
    try {
      await client.restart({ timeoutMs: timeout, waitForWorkers: wait });
    } catch (err) {
      if (!(err instanceof RestartTimeoutError)) throw err;
      ctx.stderr.write(`weft restart: ${err.message}\n`);
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
  return new Command("restart")
    .description(
      "Restart a running cluster: forget every task, cancel every client's futures, start the workers afresh",
    )
    .argument("<scheduler>", "the scheduler's address (tcp://host:port)")
    .option(
      "--timeout <ms>",
      "how long to wait for as many workers as there were to come back (default: 30000)",
    )
    .option("--no-wait", "return once the scheduler has restarted, without waiting for the workers")
    .option(
      "--connect-timeout <ms>",
      "how long to wait for the scheduler to accept the connection (default: 10000)",
    )
    .addHelpText(
      "after",
      "\nA worker run with --nanny starts again; one without exits 0 and does not come back\n" +
        "unless something starts it again.\n" +
        "Exit code: 0 once the workers are back (or at once with --no-wait), 1 if they are not\n" +
        "back within --timeout, 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string, opts: RestartCliOptions) => {
      await runRestart(address, opts, ctx);
    });
}
