/**
 * `items` by time, oldest first: records of several processes merged, each
 * process's own order kept at equal times (an item without a time comes
 * first).
 */
export function inTimeOrder<T>(items: readonly T[], timeOf: (item: T) => number | null): T[] {
  const order = items.map((item, i) => ({ item, i, t: timeOf(item) ?? Number.NEGATIVE_INFINITY }));
  order.sort((a, b) => (a.t !== b.t ? a.t - b.t : a.i - b.i));
  return order.map((x) => x.item);
}
