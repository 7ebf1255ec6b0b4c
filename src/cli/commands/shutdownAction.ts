/**
 * What `weft shutdown` does once its command line is parsed: shutdown.ts, its definition,
 * imports this module only then, so that `weft shutdown --help` loads none of it.
 */

import type { ConnectCliOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { withClient } from "./withClient.ts";

/** `weft shutdown [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runShutdown(
  address: string | undefined,
  opts: ConnectCliOptions,
  ctx: CliContext,
): Promise<void> {
  await withClient("shutdown", { given: address }, opts, ctx, async (client) => {
    const workers = await client.shutdown();
    for (const w of workers) ctx.stdout.write(`closing ${w}\n`);
    ctx.stdout.write(
      `shut down: the scheduler and ${workers.length} worker${workers.length === 1 ? "" : "s"}\n`,
    );
  });
}
