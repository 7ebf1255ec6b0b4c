/**
 * The receive limit a peer told (`Comm.limitSendsTo`), which a comm checks its
 * sends against before they go out, beside its own `maxMessageBytes`: one
 * place for TCP's and the thread bridge's check, so both refuse the same way.
 */

import { showValue } from "../util/showValue.ts";
import { MessageTooLargeError } from "./errors.ts";

/** A peer's receive limit and whose it is (`"the scheduler's --max-message-bytes"`). */
export interface PeerLimit {
  /** The largest message the peer accepts, in bytes. */
  readonly maxMessageBytes: number;
  /** Whose limit it is, as errors name it. */
  readonly whose: string;
}

/** The limit given to `limitSendsTo`; a RangeError for one that is not a positive integer. */
export function peerLimit(maxMessageBytes: number, whose: string): PeerLimit {
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
    throw new RangeError(
      `limitSendsTo: maxMessageBytes must be a positive integer, got ${showValue(maxMessageBytes)}`,
    );
  }
  return { maxMessageBytes, whose };
}

/** The error of a send of `length` bytes over `limit`, or null if it may go (or there is none). */
function overPeerLimit(length: number, limit: PeerLimit | null): MessageTooLargeError | null {
  if (limit === null || length <= limit.maxMessageBytes) return null;
  return new MessageTooLargeError(length, limit.maxMessageBytes, "send", limit.whose);
}

/**
 * The limit given to `limitSendsTo` if lower than `ownLimit` (the comm's own
 * `maxMessageBytes`), else null: a higher one changes nothing. A RangeError
 * as {@link peerLimit}'s.
 */
export function peerLimitBelow(
  maxMessageBytes: number,
  whose: string,
  ownLimit: number,
): PeerLimit | null {
  const limit = peerLimit(maxMessageBytes, whose);
  return maxMessageBytes < ownLimit ? limit : null;
}

/**
 * The error of a send of `length` bytes over the peer's limit (see
 * {@link peerLimitBelow}) or over the comm's own `maxMessageBytes`
 * (`ownLimit`), or null if it may go.
 */
export function sendLimitError(
  length: number,
  ownLimit: number,
  peer: PeerLimit | null,
): MessageTooLargeError | null {
  const overPeer = overPeerLimit(length, peer);
  if (overPeer !== null) return overPeer;
  return length > ownLimit ? new MessageTooLargeError(length, ownLimit, "send") : null;
}

/**
 * The limit a send goes by: the lower of a comm's standing peer limit
 * (`limitSendsTo`) and one given for this send alone (`Comm.send`'s `limit`),
 * either possibly absent; one not below `ownLimit` (the comm's own
 * `maxMessageBytes`) changes nothing, as with `limitSendsTo`.
 */
export function lowerPeerLimit(
  standing: PeerLimit | null,
  once: PeerLimit | undefined,
  ownLimit: number,
): PeerLimit | null {
  if (once === undefined || once.maxMessageBytes >= ownLimit) return standing;
  return standing === null || once.maxMessageBytes < standing.maxMessageBytes ? once : standing;
}
