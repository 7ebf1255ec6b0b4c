/**
 * Errors of the transport layer. A {@link CommClosedError} or a
 * {@link ConnectError} means the network failed (the peer may be gone); a
 * {@link SerializationError}, {@link FrameTooLargeError} or
 * {@link MessageTooLargeError} means the bytes or the message were wrong,
 * which retrying will not fix.
 */

import { formatBytes } from "../util/parseBytes.ts";

/** Base class of every transport error. */
export class CommError extends Error {
  override name = "CommError";
}

/** The comm is closed: locally, by the peer, or because the connection broke. */
export class CommClosedError extends CommError {
  override name = "CommClosedError";
}

/** The comm was aborted on this side (`abort()` without an error): deliberately, not a failure. */
export class CommAbortedError extends CommClosedError {
  override name = "CommAbortedError";
}

/** No connection could be made: refused, unreachable, timed out, or no such in-process listener. */
export class ConnectError extends CommError {
  override name = "ConnectError";
  constructor(
    message: string,
    /** The address that was dialled. */
    readonly address: string,
    /** The system error code, e.g. `"ECONNREFUSED"`, `"ETIMEDOUT"`, when there is one. */
    readonly code: string | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A message could not be encoded, or a received frame could not be decoded. */
export class SerializationError extends CommError {
  override name = "SerializationError";
}

/**
 * A received frame header announces more than the transport's `maxFrameBytes`
 * (a peer configured otherwise, or bytes that are not weft's framing).
 */
export class FrameTooLargeError extends CommError {
  override name = "FrameTooLargeError";
  constructor(
    /** Size announced by the header, in bytes. */
    readonly bytes: number,
    /** The limit it exceeds. */
    readonly limit: number,
    /** The header's four bytes, when known: text there means another protocol. */
    header?: Uint8Array,
  ) {
    super(
      `received a frame header announcing ${bytes} bytes: larger than maxFrameBytes (${limit})${otherProtocolHint(header)}`,
    );
  }
}

/**
 * What a frame header too large to be weft's reads as, said after the error
 * (empty if nothing): text (an HTTP peer, or one answering as HTTP), or the
 * start of a TLS handshake (a record of type 22, version 3.x: a tls:// peer).
 */
function otherProtocolHint(header: Uint8Array | undefined): string {
  if (header === undefined) return "";
  if (header[0] === 0x16 && header[1] === 0x03) {
    return "; it reads as the start of a TLS handshake: is the peer given a tls:// address for this tcp:// one?";
  }
  if (!header.every((b) => b >= 0x20 && b < 0x7f)) return "";
  const text = String.fromCharCode(...header);
  return `; it reads as text (${JSON.stringify(`${text}…`)}): is the peer a weft scheduler or worker?`;
}

/**
 * A message is larger than a `maxMessageBytes`: on sending, this process's
 * own, or the peer's receive limit that it learned (the scheduler's, which its
 * answer to `register-client` and `register-worker` carries); on receipt, this
 * process's.
 */
export class MessageTooLargeError extends CommError {
  override name = "MessageTooLargeError";
  constructor(
    /** Size of the message in bytes (on receipt: as far as it was read). */
    readonly bytes: number,
    /** The limit it exceeds. */
    readonly limit: number,
    direction: "send" | "receive",
    /**
     * Whose limit it is, when not this process's own (`"the scheduler's
     * --max-message-bytes"`), or null.
     */
    readonly whose: string | null = null,
  ) {
    // Sizes as Dask's format_bytes writes them, the message's exact size beside it.
    const size = `${formatBytes(bytes)} (${bytes} bytes)`;
    const over = `larger than ${whose ?? "maxMessageBytes"} (${formatBytes(limit)})`;
    super(
      direction === "send" || whose !== null
        ? `cannot send a message of ${size}: ${over}`
        : `received a message of at least ${size}: ${over}`,
    );
  }
}

/**
 * True when `err` means the bytes or the message were wrong (retrying will
 * not help): a `SerializationError`, `FrameTooLargeError` or `MessageTooLargeError`.
 */
export function isDataError(err: unknown): boolean {
  return (
    err instanceof SerializationError ||
    err instanceof FrameTooLargeError ||
    err instanceof MessageTooLargeError
  );
}

/**
 * True when `err` means the network failed rather than the data: a failed
 * connect, or a comm that closed (other than because of a bad frame). Dask
 * treats these as `OSError`s: the peer is presumed gone.
 */
export function isNetworkError(err: unknown): boolean {
  if (err instanceof ConnectError) return true;
  if (err instanceof CommClosedError) return !isDataError(err.cause);
  return false;
}

/**
 * The system error codes of a failed connect that may mend by trying again:
 * nothing listens there yet, a name that does not resolve yet (a Kubernetes
 * service, a batch job's host), a network or host not reachable yet, no
 * answer in time, a connection reset or aborted while being made. Dask's
 * `connect` retries every `OSError` until its timeout.
 */
const TRANSIENT_CONNECT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
]);

/**
 * True when `err` is a {@link ConnectError} that may mend by trying again, as
 * clients and workers do while they wait for their scheduler: its `code` says
 * nothing listens there yet (`ECONNREFUSED`, also an `inproc://` address
 * nobody listens at), a name that does not resolve yet (`ENOTFOUND`,
 * `EAI_AGAIN`), a network or host not reachable yet (`ENETUNREACH`,
 * `EHOSTUNREACH`, `ENETDOWN`, `EHOSTDOWN`), no answer in time (`ETIMEDOUT`),
 * or a connection reset or aborted while being made (`ECONNRESET`,
 * `ECONNABORTED`, `EPIPE`). False for anything else: a TLS failure (a
 * certificate refused, or a `tls://` peer that resets the handshake: one
 * listening on `tcp://`, or refusing this process's certificate), an address
 * that cannot be used, a `ConnectError` without a code, any other error.
 */
export function isTransientConnectError(err: unknown): err is ConnectError {
  if (!(err instanceof ConnectError) || err.code === null) return false;
  if (err.code === "ECONNRESET" && err.address.startsWith("tls://")) return false;
  return TRANSIENT_CONNECT_CODES.has(err.code);
}
