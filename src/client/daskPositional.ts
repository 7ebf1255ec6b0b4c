/**
 * Dask's positional arguments that weft takes otherwise, refused with a message
 * that says how weft takes them: code ported from Dask (`client.get(dsk, ["a"])`,
 * `client.map(f, xs, ys)`, `client.gather(futures, "skip")`) met a bare "options
 * must be an object, got [\"a\"]", which said what was wrong but not what to write,
 * or, for gather, had its argument dropped without a word.
 */

import { showValue } from "../util/showValue.ts";

/**
 * `compute`'s or `get`'s (`op`) options given as Dask's positional `keys` (an array
 * or a string): a TypeError saying they go in the options. Else nothing: the other
 * checks of the options follow.
 */
export function refuseKeysGivenPositionally(op: string, options: unknown): void {
  if (!Array.isArray(options) && typeof options !== "string") return;
  const keys = typeof options === "string" ? [options] : options;
  throw new TypeError(
    `${op}: options must be an object, got ${showValue(options)}: the keys wanted go in the options, ${op}(graph, { keys: ${showValue(keys)} })${op === "get" ? " (Dask's client.get(dsk, keys) takes them second)" : ""}`,
  );
}

/**
 * `map`'s options given as an iterable (an array, a Set): Dask's `map(f, xs, ys)`,
 * which calls `f(x, y)` for each pair. A TypeError saying weft's map takes one
 * iterable, and how to zip them. Else nothing.
 */
export function refuseSecondIterable(options: unknown): void {
  const iterable =
    typeof options === "object" &&
    options !== null &&
    typeof (options as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function";
  if (!iterable) return;
  throw new TypeError(
    `map: options must be an object, got ${showValue(options)}: map takes one iterable of items, fn called with each (Dask's map(f, xs, ys) calls f(x, y): pass the pairs, map(fn, xs.map((x, i) => [x, ys[i]])), fn taking the pair)`,
  );
}

/**
 * `gather`'s arguments past the futures: a string is Dask's `errors` (`"raise"` or
 * `"skip"`), which weft's gather has not (it always rejects with the first error,
 * as `"raise"`), and an object is options (`{ errors: "skip" }`, Dask's keyword
 * written as weft takes options elsewhere), which it has none of: both were dropped
 * without a word. Anything else is left alone (an index, as `Array.prototype.map`
 * passes to a bound `gather`).
 */
export function refuseGatherErrors(extra: readonly unknown[]): void {
  const errors = extra[0];
  const options = typeof errors === "object" && errors !== null;
  if (typeof errors !== "string" && !options) return;
  throw new TypeError(
    `gather: takes the futures alone, got a second argument ${showValue(errors)} (${options ? "options: it takes none" : "Dask's errors="}): weft's gather rejects with the first error, as errors="raise"; to skip the failed ones, await Promise.allSettled(futures.map((f) => f.result()))`,
  );
}

/**
 * `scatter`'s options given as Dask's positional `workers` (an array of addresses,
 * or one address): a TypeError saying they go in the options,
 * `scatter(values, { workers: [...] })`. Else nothing: the other checks follow.
 */
export function refuseWorkersGivenPositionally(options: unknown): void {
  if (!Array.isArray(options) && typeof options !== "string") return;
  const workers = typeof options === "string" ? [options] : options;
  throw new TypeError(
    `scatter: options must be an object, got ${showValue(options)}: the workers go in the options, scatter(values, { workers: ${showValue(workers)} }) (Dask's client.scatter(data, workers) takes them second)`,
  );
}
