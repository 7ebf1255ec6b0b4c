/**
 * Stimulus ids as shells make them: `prefix-<wall-clock seconds>`, the shape
 * Dask gives them (`f"{name}-{time()}"`). They name a cause in logs and
 * stories; they need not be unique.
 */
export function newStimulusId(prefix: string): string {
  return `${prefix}-${Date.now() / 1000}`;
}
