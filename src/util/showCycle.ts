/** How many keys of a long cycle an error shows at its start (and 2 at its end). */
const CYCLE_KEYS_SHOWN = 8;

/**
 * `cycle` (its first key repeated at its end) as `a → b → a`; a long one
 * abbreviated to its first keys and last two, `x4999 → x4998 → … → x4992 → …
 * (4,991 more) … → x0 → x4999`: a cycle of 5,000 tasks made an error message
 * of 39 kB. Shared by the client's graph checks and the scheduler's
 * update-graph, so both name a cycle the same way.
 */
export function showCycle(cycle: readonly string[]): string {
  if (cycle.length <= CYCLE_KEYS_SHOWN + 3) return cycle.join(" → ");
  const hidden = cycle.length - CYCLE_KEYS_SHOWN - 2;
  return [
    ...cycle.slice(0, CYCLE_KEYS_SHOWN),
    `… (${hidden.toLocaleString("en")} more) …`,
    ...cycle.slice(-2),
  ].join(" → ");
}
