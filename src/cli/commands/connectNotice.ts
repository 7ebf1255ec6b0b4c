/**
 * A line on stderr when a command's connection to its scheduler has had no
 * answer for a while: a try whose TLS handshake the other end never makes, or
 * whose packets are dropped, fails only at `--connect-timeout` (30 s for
 * `weft run`), and a command silent that long looks hung. A refusal, or a name
 * that does not resolve, is said at once already (`onWaiting`).
 */

import { waitingForSchedulerLine } from "./schedulerChoice.ts";

/** After how long without an answer a command says that it waits, in ms. */
export const CONNECT_NOTICE_MS = 2_000;

/**
 * `connect(said)`, with `weft <command>: waiting for the scheduler at <address>
 * (no answer for 2 s); giving up after N s` written by `write` if it has neither
 * settled nor called `said` (the command said why it waits already) within
 * {@link CONNECT_NOTICE_MS}. `address` says the address dialled at that time.
 */
export async function sayingItWaitsForAnswer<T>(
  write: (line: string) => void,
  command: string,
  address: () => string,
  timeoutMs: number,
  connect: (said: () => void) => Promise<T>,
): Promise<T> {
  let said = false;
  const notice = setTimeout(() => {
    if (said) return;
    said = true;
    write(
      waitingForSchedulerLine(
        command,
        address(),
        `no answer for ${CONNECT_NOTICE_MS / 1000} s`,
        timeoutMs,
      ),
    );
  }, CONNECT_NOTICE_MS);
  try {
    return await connect(() => {
      said = true;
    });
  } finally {
    clearTimeout(notice);
  }
}
