/** The small statistics the benchmarks report. */

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The value at quantile `q` (0..1) of `xs`, nearest rank. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
}

/** `x` rounded to `digits` decimals, as a number (for JSON). */
export const round = (x: number, digits = 0): number => Number(x.toFixed(digits));
