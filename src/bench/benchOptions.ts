/**
 * The options the benchmarks share on their command lines (`npm run bench:*`
 * and `weft bench`), checked: each throws an error naming the flag.
 */

import { parseDecimal } from "../util/decimal.ts";
import { beyondExactIntegers, EXACT_INTEGER_BOUND } from "../util/exactInteger.ts";
import { UsageError } from "../util/usageError.ts";
import { checkGraphName, checkGraphScale } from "./graphNames.ts";

/**
 * The largest `--scale`: ten times Dask's sizes is already 410,880 tasks for shuffle
 * (its splits grow as the square); beyond, a run no longer fits a benchmark's time and
 * memory (an infinite scale asked for arrays of infinite length).
 */
export const MAX_SCALE = 10;

/** `--warmup`, `--saturation` and `--scale` as given to commander, checked. */
export function clusterRunOptions(opts: Readonly<Record<string, string>>): {
  warmup: number;
  saturation: number;
  scale: number;
} {
  const warmup = nonNegativeInteger(opts.warmup, "--warmup");
  const saturation = opts.saturation === "inf" ? Number.POSITIVE_INFINITY : number(opts.saturation);
  const scale = number(opts.scale);
  if (!(saturation > 0)) throw new UsageError("--saturation must be > 0 or inf");
  if (!(scale > 0 && scale <= MAX_SCALE)) {
    throw new UsageError(`--scale must be a number > 0 and at most ${MAX_SCALE}`);
  }
  return { warmup, saturation, scale };
}

/**
 * `--graphs` split and checked against the benchmark's graph names; with `scale`, each
 * is checked to stay within its largest scale too.
 */
export function graphNames(list: string, scale = 1): string[] {
  return list.split(",").map((g) => checkGraphScale(checkGraphName(g.trim()), scale));
}

/** `value` as a decimal number; NaN for anything else (`Number` reads `""` as 0, `0x10` as 16). */
function number(value: string | undefined): number {
  return value === undefined ? Number.NaN : parseDecimal(value);
}

/** `n`, an integer option's value, unless past the exact integers (it is not the one typed). */
function exact(n: number, flag: string): number {
  if (beyondExactIntegers(n)) throw new UsageError(`${flag} must be ${EXACT_INTEGER_BOUND}`);
  return n;
}

/** The value of option `flag` as an integer >= 0; throws otherwise (an empty value too). */
export function nonNegativeInteger(value: string, flag: string): number {
  const n = exact(number(value), flag);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be an integer >= 0`);
  return n;
}

/** The value of option `flag` as a positive integer; throws otherwise (an empty value too). */
export function positiveInteger(value: string, flag: string): number {
  const n = exact(number(value), flag);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}
