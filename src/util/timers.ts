import { showValue } from "./showValue.ts";

/** The longest delay a Node.js timer waits, in ms (2^31 − 1): a longer one fires at once, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Why `ms` cannot be a timeout, or null: it must be a positive number of ms a
 * Node.js timer can wait, or `Infinity` (no timeout). A longer timer of Node.js
 * (Infinity and NaN too) fires after 1 ms: a wait meant to be long would end at once.
 */
export function timeoutProblem(ms: unknown): string | null {
  if (typeof ms === "number" && ms > 0 && (ms <= MAX_TIMER_MS || ms === Number.POSITIVE_INFINITY)) {
    return null;
  }
  return `timeoutMs must be a positive number of ms, at most ${MAX_TIMER_MS} (about 24.8 days), or Infinity (no limit), got ${showValue(ms)}`;
}

/** `setTimeout(fn, ms)`, or no timer at all for `ms` = Infinity (see {@link timeoutProblem}). */
export function timeoutUnlessInfinite(
  fn: () => void,
  ms: number,
): ReturnType<typeof setTimeout> | undefined {
  return ms === Number.POSITIVE_INFINITY ? undefined : setTimeout(fn, ms);
}
