/**
 * A line on stderr when a command asking every worker waits long: a worker
 * that does not answer (frozen, cut off) is waited for until the scheduler
 * removes it (its --worker-ttl, 30 s by default), a silence that looks hung.
 */

import type { CliContext } from "./context.ts";

/** After how long a command still waiting for its workers says so, in ms. */
export const WAIT_NOTICE_MS = 2_000;

/**
 * `work()`, with `weft <command>: still waiting for <what> (…)…` written to
 * `ctx.stderr` if it has not settled after {@link WAIT_NOTICE_MS}.
 */
export async function sayingItWaits<T>(
  ctx: CliContext,
  command: string,
  what: string,
  work: () => Promise<T>,
): Promise<T> {
  const notice = setTimeout(() => {
    ctx.stderr.write(
      `weft ${command}: still waiting for ${what} (one that does not answer is waited for until the scheduler removes it)…\n`,
    );
  }, WAIT_NOTICE_MS);
  try {
    return await work();
  } finally {
    clearTimeout(notice);
  }
}
