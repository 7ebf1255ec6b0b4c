/**
 * The bound of every integer a command line reads: past Number.MAX_SAFE_INTEGER
 * (2^53 - 1) a number read is no longer the one typed (99999999999999999999
 * reads as 1e20, and 2^53 + 1 as 2^53), so it is refused, saying this bound: the
 * refusals it met said "expected an integer ≥ 0" of a number that is one.
 */

/** `at most 9007199254740991 (Number.MAX_SAFE_INTEGER)`, as a refusal says it. */
export const EXACT_INTEGER_BOUND = `at most ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER)`;

/** Whether `n`, as read, is past the exact integers (Infinity too: `1e400`). */
export function beyondExactIntegers(n: number): boolean {
  return n > Number.MAX_SAFE_INTEGER;
}
