/**
 * Wall-clock seconds since the epoch at sub-millisecond resolution (Dask's
 * `time()`): what the scheduler and the workers stamp their records with, so
 * that records from different processes merge in order.
 */
export function wallSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}
