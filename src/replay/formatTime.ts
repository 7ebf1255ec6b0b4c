/** The epoch seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: Python's datetime range. */
const FIRST_SECOND = -62_135_596_800;
const LAST_SECOND = 253_402_300_799;
/** The width of a formatted time, so that stories stay aligned. */
const WIDTH = 27;

/** Seconds since the epoch as UTC ISO 8601 with microseconds: `2026-11-29T23:48:42.555337Z`. */
export function formatEpochSeconds(t: number | null): string {
  if (t === null || !Number.isFinite(t)) return "-".repeat(WIDTH);
  let whole = Math.floor(t);
  let micros = Math.round((t - whole) * 1e6);
  if (micros === 1_000_000) {
    whole += 1;
    micros = 0;
  }
  // A corrupt or hand-made log can hold any number: outside years 1 to 9999 the ISO form
  // would be wrong (toISOString writes ±YYYYYY, which the slice below cuts) or throw
  // (beyond ±8.64e15 ms), so the seconds are written as they are.
  if (whole < FIRST_SECOND || whole > LAST_SECOND) return `${t}s`.padEnd(WIDTH);
  const date = new Date(whole * 1000).toISOString().slice(0, 19);
  return `${date}.${String(micros).padStart(6, "0")}Z`;
}
