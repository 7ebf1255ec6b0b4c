/**
 * The rows a page shows of a table that grows with the cluster (workers, task
 * prefixes): a page refreshed every two seconds must stay small however big
 * the cluster, as Dask's dashboard shows the top of its tables.
 */

/**
 * The `limit` rows of `rows` that `rank` puts first, kept in their order in
 * `rows` (so that a row stays where it was from one refresh to the next),
 * and how many are left out.
 */
export function topRows<T>(
  rows: readonly T[],
  limit: number,
  rank: (a: T, b: T) => number,
): { readonly shown: readonly T[]; readonly more: number } {
  if (rows.length <= limit) return { shown: rows, more: 0 };
  const order = rows.map((_, i) => i);
  order.sort((a, b) => rank(rows[a], rows[b]) || a - b);
  const kept = order.slice(0, limit).sort((a, b) => a - b);
  return { shown: kept.map((i) => rows[i]), more: rows.length - limit };
}
