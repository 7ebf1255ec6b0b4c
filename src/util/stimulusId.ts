/**
 * Stimulus ids as shells make them: `prefix-<wall-clock seconds>`, the shape
 * Dask gives them (`f"{name}-{time()}"`). They name a cause in logs and
 * stories; they need not be unique.
 */
export function newStimulusId(prefix: string): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastSeconds = String(ms / 1000);
    recent.clear();
  }
  let id = recent.get(prefix);
  if (id === undefined) {
    id = `${prefix}-${lastSeconds}`;
    recent.set(prefix, id);
  }
  return id;
}

/**
 * The ids made within the current millisecond, by prefix: a busy worker makes
 * thousands a second with the same few prefixes, and formatting the clock's
 * number is the expensive part.
 */
const recent = new Map<string, string>();
let lastMs = Number.NaN;
let lastSeconds = "";
