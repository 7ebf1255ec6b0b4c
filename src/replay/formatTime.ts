/** Seconds since the epoch as UTC ISO 8601 with microseconds: `2026-11-29T23:48:42.555337Z`. */
export function formatEpochSeconds(t: number | null): string {
  if (t === null || !Number.isFinite(t)) return "-".repeat(27);
  let whole = Math.floor(t);
  let micros = Math.round((t - whole) * 1e6);
  if (micros === 1_000_000) {
    whole += 1;
    micros = 0;
  }
  const date = new Date(whole * 1000).toISOString().slice(0, 19);
  return `${date}.${String(micros).padStart(6, "0")}Z`;
}
