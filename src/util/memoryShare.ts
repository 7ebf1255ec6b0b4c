/**
 * Dask's `memory_limit` as a bare number from 0 to 1 (`parse_memory_limit`): 0 is
 * no limit and any other that share of the machine's memory (`0.5`: half, `1`: all
 * of it), where a larger bare number is bytes. Read as bytes, `1` was a 1-byte
 * budget that failed every task with a MemoryError, and `0` or `0.5` no size.
 */

import { parseDecimal } from "./decimal.ts";

/** The share of the machine's memory `v` names, from 0 (no limit) to 1; null for a size. */
export function memoryShare(v: number | string): number | null {
  // A bare decimal number, padded or not, as Python's `float()` reads a job script's: no hex, no unit.
  const n = typeof v === "string" ? parseDecimal(v.trim()) : v;
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : null;
}
