/**
 * A warning for a timeout of milliseconds given as a bare number of less than a
 * second (`weft worker --death-timeout 60`): these options read a bare number as
 * milliseconds, as they always have and as scripts rely on, where Dask's
 * `parse_timedelta` reads it as seconds. A Dask user's `--death-timeout 60` was a
 * worker giving up after 60 ms, without a word of why. The number is still read
 * so; the warning says how, and how to write either meaning.
 */

import { parseDecimal } from "../../util/decimal.ts";

/**
 * Below it a bare number is more likely seconds meant than milliseconds: no timeout
 * of these options is useful under a second, and Dask's are whole seconds.
 */
const SECOND_MS = 1000;

/**
 * The line (ending with a newline) the command `command` prints on stderr when its
 * option `flag` is given `text`, a bare number of ms from 1 to 999 (one the option
 * accepts); null for anything else (not given, a number with a unit, a second or
 * more, a number the option refuses with its own error).
 */
export function bareMillisecondsWarning(
  command: string,
  flag: string,
  text: string | undefined,
): string | null {
  if (text === undefined) return null;
  const ms = parseDecimal(text);
  if (!Number.isInteger(ms) || ms < 1 || ms >= SECOND_MS) return null;
  return `weft ${command}: ${flag} ${text} is read as ${ms} ms (Dask reads a bare number as seconds): write ${ms}ms to keep it, or ${ms}s\n`;
}

/** Print on `stderr` the {@link bareMillisecondsWarning} of each option `given` (flag, text). */
export function warnBareMilliseconds(
  stderr: NodeJS.WritableStream,
  command: string,
  given: readonly (readonly [flag: string, text: string | undefined])[],
): void {
  for (const [flag, text] of given) {
    const warning = bareMillisecondsWarning(command, flag, text);
    if (warning !== null) stderr.write(warning);
  }
}
