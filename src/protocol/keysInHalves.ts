/**
 * A message of many keys too large to send, in two messages of half the keys
 * each, which may fit where the whole did not: what the scheduler sends a
 * worker (`free-keys`, `remove-replicas`) or a client (`cancelled-keys`), and a
 * worker the scheduler (`add-keys`, `request-refresh-who-has`), in place of one
 * it cannot send. Each half is handled as the whole would have been, key by key.
 */

/**
 * A message of `keys` in two messages of half of them each, the first the
 * larger; empty for fewer than two keys (nothing to split).
 */
export function keysInHalves<M extends { readonly keys: readonly string[] }>(msg: M): M[] {
  if (!Array.isArray(msg.keys) || msg.keys.length < 2) return [];
  const half = Math.ceil(msg.keys.length / 2);
  return [
    { ...msg, keys: msg.keys.slice(0, half) },
    { ...msg, keys: msg.keys.slice(half) },
  ];
}
