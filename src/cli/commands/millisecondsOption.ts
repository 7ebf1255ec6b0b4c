/**
 * The options of weft's commands that take a time in milliseconds (`--worker-ttl`,
 * `--death-timeout`, `--connect-timeout`, `weft restart --timeout`, the scheduler's
 * intervals...): a bare number stays milliseconds, as these options always read it
 * (scripts give `--connect-timeout 30000`), and a number with a unit is a duration
 * as Dask writes one (`60s`, `5m`, `1.5h`, `250ms`: dask's `parse_timedelta`).
 * Without units, the Dask habit `--death-timeout 60s` was refused, and
 * `--worker-ttl 5m` too, for a number was all they took.
 */

import { parseDecimal } from "../../util/decimal.ts";
import { parseTimedelta } from "../../util/parseTimedelta.ts";

/** What such an option takes, in the words of its help and of its refusals. */
export const MILLISECONDS_FORMS = "milliseconds, or a duration such as 60s, 5m or 1.5h";

/** A number then a unit (`60s`, `1.5 h`, `250ms`), as opposed to a bare number. */
const WITH_UNIT = /^\+?\.?\d[\d.e+-]*\s*[a-z]+$/i;

/**
 * The option `name`'s `text` in ms: a positive whole number of ms (bare, as
 * `30000`, or from a duration, as `30s`) of at most `atMost` (with `atMostWhy`,
 * e.g. "about 24.8 days", said with it when refused); throws a clear error
 * naming the option and the forms it takes.
 */
export function millisecondsOption(
  name: string,
  text: string,
  atMost: number,
  atMostWhy?: string,
): number {
  const ms = WITH_UNIT.test(text.trim()) ? unitDurationMs(name, text) : parseDecimal(text);
  // A fraction of a ms was refused before units were read, and still is: timers
  // count whole ms, and `1.5` is more likely a slip than a wish. `0` leaves no time.
  if (!Number.isInteger(ms) || ms < 1) {
    throw new Error(
      `${name} must be a positive whole number of ${MILLISECONDS_FORMS}, got ${text}`,
    );
  }
  if (ms > atMost) {
    const why = atMostWhy === undefined ? "" : ` (${atMostWhy})`;
    throw new Error(`${name} must be at most ${atMost} ms${why}, got ${text}`);
  }
  return ms;
}

/**
 * `text` (a number then a unit) in ms, NaN when that is not a whole number (`1.5ms`,
 * `100us`); throws for a unit parse_timedelta does not know, saying which it knows.
 */
function unitDurationMs(name: string, text: string): number {
  let seconds: number;
  try {
    seconds = parseTimedelta(text);
  } catch (err) {
    throw new Error(
      `${name} must be a positive whole number of ${MILLISECONDS_FORMS}, got ${text}: ${(err as Error).message}`,
    );
  }
  const ms = seconds * 1000;
  const whole = Math.round(ms);
  // 1.1s is 1100.0000000000002 ms in floating point: a whole number all the same.
  return Math.abs(ms - whole) <= 1e-9 * Math.max(1, whole) ? whole : Number.NaN;
}
