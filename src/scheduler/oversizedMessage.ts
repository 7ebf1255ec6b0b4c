/**
 * What the scheduler logs of a worker's or client's connection that it closed
 * because the peer sent a message over the scheduler's `maxMessageBytes`: a
 * peer that registered learned the limit from the reply and refuses to send
 * more itself, so one that did not is named, with the sizes, and why it may not
 * have known.
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { formatBytes } from "../util/parseBytes.ts";

/**
 * Why a peer may not know the scheduler's limit: every weft since the limit
 * was told at registration goes by it (a task's client on a pool thread too,
 * through its worker's connection).
 */
const UNAWARE_PEER = "is it a weft older than the scheduler's?";

/** A log record's fields and message. */
export interface OversizedMessageRecord {
  readonly fields: { readonly peer: string; readonly bytes: number; readonly limit: number };
  readonly message: string;
}

/**
 * The record to log when `err`, which ended the connection of `who` (`"client
 * c1"`) at `peer`, is a received message over this scheduler's limit; null for
 * any other error.
 */
export function oversizedMessageRecord(
  err: unknown,
  who: string,
  peer: string,
): OversizedMessageRecord | null {
  if (!(err instanceof MessageTooLargeError)) return null;
  const { bytes, limit } = err;
  return {
    fields: { peer, bytes, limit },
    message:
      `${who} sent a message of at least ${formatBytes(bytes)}, larger than this scheduler's ` +
      `--max-message-bytes (${formatBytes(limit)}): closed its connection. It did not go by the ` +
      `limit the scheduler told it when it registered (${UNAWARE_PEER})`,
  };
}
