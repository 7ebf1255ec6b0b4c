/**
 * What a connection closed unanswered on a `tcp://` address may mean besides the
 * usual causes: the server there listens on `tls://`. A TLS listener given weft's
 * framing in the clear closes without a word (its own log says so); the dialler saw
 * only "closed the connection", and its message asked whether the address was a
 * worker's, which sent a user of a TLS cluster looking in the wrong place.
 */
export function plainToTlsHint(address: string): string {
  return address.startsWith("tcp://")
    ? `a scheduler listening on tls:// (give ${address.replace("tcp://", "tls://")} and the cluster's TLS credentials, --tls-ca-file, --tls-cert, --tls-key)`
    : "";
}
