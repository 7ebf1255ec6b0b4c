/**
 * The check of a close's `timeout` argument, the same for `LocalCluster.close`,
 * `Scheduler.close` and `Worker.close`: the scheduler's and the worker's took
 * null, NaN, a negative number or a string as 0 (or as "at once") where the
 * cluster's refused them, so that a computed timeout gone wrong closed at once,
 * cutting off its peers and abandoning its plugins' teardowns, without a word.
 */

import { showValue } from "./showValue.ts";

/**
 * A RangeError naming `who` (`"Scheduler.close"`) if `timeout` is not a number of
 * seconds ≥ 0 (`Infinity` is one: wait until the teardowns end), else null.
 */
export function closeTimeoutError(who: string, timeout: unknown): RangeError | null {
  if (typeof timeout === "number" && timeout >= 0) return null;
  return new RangeError(
    `${who}: timeout must be a number of seconds ≥ 0, got ${showValue(timeout)}`,
  );
}
