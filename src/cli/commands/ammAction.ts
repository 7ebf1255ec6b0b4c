/**
 * What `weft amm` does once its command line is parsed: amm.ts, its definition,
 * imports this module only then, so that `weft amm --help` loads none of it.
 */

import type { AmmStatus } from "../../protocol/messagesSession.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
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
