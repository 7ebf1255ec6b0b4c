/**
 * Python's `round(x)` for a float: the nearest integer, an exact tie (`2.5`,
 * `-1.5`) going to the even one, where `Math.round` rounds ties up (and
 * `-0.5` to `-0`). Never `-0`. `NaN` and infinities come back as they are
 * (Python raises on them).
 */
export function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const floor = Math.floor(x);
  // Exact: the fraction of a double is itself a double.
  const fraction = x - floor;
  const up = fraction > 0.5 || (fraction === 0.5 && floor % 2 !== 0);
  return (up ? floor + 1 : floor) + 0;
}
