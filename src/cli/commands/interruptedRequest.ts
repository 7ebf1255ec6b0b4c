/**
 * Ctrl-C (SIGINT) or SIGTERM during a command that asks the scheduler to change the
 * cluster (`weft restart`, `weft retire`): the command ends at once, saying whether
 * its request had left, which the scheduler then carries out without it, with the
 * exit code a shell gives a command the signal ended (130, 143), as `weft run`
 * does. Killed by the signal, these commands ended silently, leaving the user to
 * guess whether the cluster was changing.
 */

import { constants } from "node:os";
import type { CliContext } from "./context.ts";
import { untilSignal } from "./serveUntil.ts";

/** What {@link unlessInterrupted} gives for a command a signal ended. */
export const INTERRUPTED: unique symbol = Symbol("interrupted");

/** What to say once interrupted, before and after the request left. */
export interface InterruptedWords {
  /** e.g. "nothing was restarted". */
  readonly beforeAsked: string;
  /** e.g. "the scheduler goes on with it". */
  readonly afterAsked: string;
  /** e.g. "the restart". */
  readonly request: string;
}

/**
 * `operation`'s value, or {@link INTERRUPTED} once a signal came first (said on
 * stderr as `weft NAME: interrupted (SIGINT) …`, `ctx.exitCode` set). `operation`
 * calls `asking()` as its request leaves (before it, only names are looked up).
 */
export async function unlessInterrupted<T>(
  name: string,
  ctx: CliContext,
  words: InterruptedWords,
  operation: (asking: () => void) => Promise<T>,
): Promise<T | typeof INTERRUPTED> {
  let asked = false;
  const running = operation(() => {
    asked = true;
  });
  let finished = (): void => {};
  const interrupted = untilSignal(new Promise<void>((r) => (finished = r)));
  const signal = await Promise.race([running.then(() => null), interrupted]).finally(finished);
  if (signal === null) return running;
  // Its answer, or the connection's end as the client closes, is no longer anyone's.
  running.catch(() => {});
  ctx.stderr.write(
    `weft ${name}: interrupted (${signal}) ${
      asked
        ? `after ${words.request} was asked: ${words.afterAsked}`
        : `before ${words.request} was asked: ${words.beforeAsked}`
    }\n`,
  );
  // As a shell reports a command a signal ended: 130 for SIGINT, 143 for SIGTERM.
  ctx.exitCode = 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
  return INTERRUPTED;
}
