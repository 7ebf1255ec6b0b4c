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

/**
 * A distribution-free 95% confidence interval of the median of `xs`: the order
 * statistics ranked `n/2 ∓ 0.98·√n` (the binomial's normal approximation; rough
 * below ~20 values).
 */
export function medianInterval95(xs: readonly number[]): [number, number] {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const k = Math.max(0, Math.floor(n / 2 - 0.98 * Math.sqrt(n)));
  return [s[k], s[Math.min(n - 1, n - 1 - k)]];
}
