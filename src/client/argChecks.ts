/**
 * Checks of what the public API is called with, for JavaScript callers and
 * `as any` ones the types do not stop: a TypeError naming the method and the
 * argument, instead of a bare "Cannot read properties of null" from deep
 * inside, a wait that never ends, or a meaningless value taken silently.
 */

import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";

/**
 * The options object `what` was given (`{}` when none was, unless they are
 * `required`), or a TypeError for null, an array, a function or a primitive:
 * reading its fields would throw (null) or find none (`5`, `"x"`), so that a
 * mistake went unnoticed.
 */
export function optionsOf<T extends object>(
  what: string,
  options: T | undefined,
  required = false,
): T {
  if (options === undefined && !required) return {} as T;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object, got ${showValue(options)}`);
  }
  return options;
}

/**
 * {@link optionsOf}, also refusing a key that is none of `known`: a misspelt
 * option (Dask's `timeout` for `timeoutMs`) was dropped without a word, and the
 * default ran instead, which for a wait is waiting forever.
 */
export function knownOptionsOf<T extends object>(
  what: string,
  options: T | undefined,
  known: OptionNames<T>,
): T {
  const o = optionsOf(what, options);
  checkKnownOptions(what, o, known);
  return o;
}

/** `T` with the options `K` no longer null: what {@link nullsAsDefaults} gives. */
export type NullsAsDefaults<T, K extends keyof T> = Omit<T, K> & {
  readonly [P in K]?: Exclude<T[P], null>;
};

/**
 * `options` without those of `names` that are null: for an option Dask
 * defaults to `None` (a count, a list of workers, a timeout to wait
 * forever), null means the default, as undefined does, so that code written
 * with Python's habits (or passing on a value that may be null) is not
 * refused. The object itself when none is null, else a copy.
 */
export function nullsAsDefaults<T extends object, K extends keyof T>(
  options: T,
  names: readonly K[],
): NullsAsDefaults<T, K> {
  let out: Record<PropertyKey, unknown> | null = null;
  for (const name of names) {
    if ((options as Record<PropertyKey, unknown>)[name as PropertyKey] === null) {
      if (out === null) out = { ...(options as Record<PropertyKey, unknown>) };
      delete out[name as PropertyKey];
    }
  }
  return (out ?? options) as NullsAsDefaults<T, K>;
}

/** A TypeError naming `what` and `name` unless `v` is undefined or a boolean. */
export function checkOptionalBoolean(what: string, name: string, v: unknown): void {
  if (v !== undefined && typeof v !== "boolean") {
    throw new TypeError(`${what}: ${name} must be true or false, got ${showValue(v)}`);
  }
}

/**
 * The items of `v` as an array; a TypeError naming `what` and `name` unless
 * it is an iterable other than a string (whose characters are hardly ever
 * meant as the items).
 */
export function itemsOf(what: string, name: string, v: unknown): readonly unknown[] {
  if (typeof v === "string") {
    throw new TypeError(
      `${what}: ${name} must be an array or another iterable, got the string ${showValue(v)}`,
    );
  }
  if (
    typeof v !== "object" ||
    v === null ||
    typeof (v as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== "function"
  ) {
    throw new TypeError(
      `${what}: ${name} must be an array or another iterable, got ${showValue(v)}`,
    );
  }
  return Array.isArray(v) ? v : [...(v as Iterable<unknown>)];
}

/**
 * A TypeError naming `what` and `name` unless `v` is undefined or a number
 * of milliseconds from 0 (above 0 if `positive`: an interval of 0 would spin)
 * to what a timer can wait (about 24.8 days).
 */
export function checkOptionalMs(what: string, name: string, v: unknown, positive = false): void {
  if (
    v !== undefined &&
    !(typeof v === "number" && (positive ? v > 0 : v >= 0) && v <= MAX_TIMER_MS)
  ) {
    throw new TypeError(
      `${what}: ${name} must be a number of milliseconds ${positive ? "> 0" : "≥ 0"} and at most ${MAX_TIMER_MS}, got ${showValue(v)}`,
    );
  }
}

/**
 * The `workers` field of a request about some workers (`hasWhat`,
 * `processing`, `nthreads`): `{}` for every worker (no `workers`, or null),
 * else the addresses given
 * (one, or an array). A TypeError naming `what` for anything but non-empty
 * strings.
 */
export function workerAddressesField(
  what: string,
  workers: unknown,
): { readonly workers?: readonly string[] } {
  if (workers == null) return {}; // null too, as Dask's None
  const list = typeof workers === "string" ? [workers] : workers;
  if (!(Array.isArray(list) && list.every((w: unknown) => typeof w === "string" && w !== ""))) {
    throw new TypeError(`${what}: expected worker addresses, got ${showValue(workers)}`);
  }
  return { workers: list as readonly string[] };
}
