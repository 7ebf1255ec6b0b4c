/**
 * The keys of one fetch from a peer, in parts whose `get_data` answer should
 * fit the fetching worker's `maxMessageBytes`.
 *
 * The state machine bounds a fetch by its values' sizes alone
 * (`transferMessageBytesLimit`, as Dask does), but the request names every key
 * and the answer repeats them: many long keys of small values make a request
 * or an answer larger than a worker takes. The peer then closed the connection
 * on the request (a network failure, retried without end) or refused the
 * answer (the fetch failed). Split here, the parts are fetched one after the
 * other and the state machine sees one answer.
 */

/** Bytes an answer spends on each key beside its name and its value (msgpack's headers). */
export const ENTRY_OVERHEAD_BYTES = 64;
/** Bytes of an answer beside its entries (its envelope: id, status). */
export const ANSWER_OVERHEAD_BYTES = 1024;

/**
 * `keys` in order, in parts whose estimated answer (each key's UTF-8 name,
 * its value's `nbytesOf` and {@link ENTRY_OVERHEAD_BYTES}, plus
 * {@link ANSWER_OVERHEAD_BYTES}) is at most `maxMessageBytes`; a key too large
 * alone is a part alone. One part (all of `keys`) where there is no limit.
 */
export function getDataParts(
  keys: Iterable<string>,
  nbytesOf: (key: string) => number,
  maxMessageBytes: number | undefined,
): string[][] {
  const all = [...keys];
  if (maxMessageBytes === undefined) return [all];
  const parts: string[][] = [];
  let part: string[] = [];
  let bytes = ANSWER_OVERHEAD_BYTES;
  for (const key of all) {
    const entry = Buffer.byteLength(key) + nbytesOf(key) + ENTRY_OVERHEAD_BYTES;
    if (part.length > 0 && bytes + entry > maxMessageBytes) {
      parts.push(part);
      part = [];
      bytes = ANSWER_OVERHEAD_BYTES;
    }
    part.push(key);
    bytes += entry;
  }
  if (part.length > 0 || parts.length === 0) parts.push(part);
  return parts;
}
