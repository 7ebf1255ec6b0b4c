/**
 * The transport interface: a {@link Comm} is one bidirectional, ordered,
 * message-oriented connection; a {@link Listener} accepts them. Two
 * implementations share it: in-process (`inproc://name/N`, messages passed by
 * reference) and TCP (`tcp://host:port`, length-prefixed msgpack frames).
 */

import { constants as bufferConstants } from "node:buffer";
import { showValue } from "../util/showValue.ts";
import { MAX_FRAME_LENGTH } from "./framing.ts";
import type { PeerLimit } from "./peerLimit.ts";
import type { TlsCredentials } from "./tls.ts";

/** How a comm ended. */
export interface CommCloseInfo {
  /** Null for an orderly close (by either side); else what broke it. */
  readonly error: Error | null;
}

/** One connection. Messages arrive in the order they were sent. */
export interface Comm extends AsyncIterable<unknown> {
  /** This end's address (`inproc://local/7`, `tcp://127.0.0.1:50123`). */
  readonly localAddress: string;
  /** The other end's address. For an accepted TCP comm, the peer's ephemeral port. */
  readonly peerAddress: string;
  /** True once closed, by either side or by an error. */
  readonly isClosed: boolean;
  /** Resolves (never rejects) once the comm is closed. */
  readonly closed: Promise<CommCloseInfo>;
  /**
   * Send one message. Resolves once the transport has taken it (TCP: the bytes
   * were handed to the OS, so awaiting it applies backpressure). Rejects with a
   * `CommClosedError` if the comm is closed, a `SerializationError` if the
   * message cannot be encoded, a `MessageTooLargeError` if it is larger than
   * `maxMessageBytes`, the peer's limit ({@link limitSendsTo}) or `limit`
   * (the comm stays open after either of the last two).
   *
   * `limit`: the peer takes at most this much for this message alone (it said
   * so in its request: a `get_data` answer to a requester whose own limit is
   * lower), applied as a limit given to {@link limitSendsTo} is. Ignored where
   * messages have no size limit (in-process).
   */
  send(msg: unknown, limit?: PeerLimit): Promise<void>;
  /**
   * The peer accepts messages of at most `maxMessageBytes` (it said so, e.g.
   * the scheduler in its answer to a registration): from now on a larger
   * send rejects with a `MessageTooLargeError` naming `whose` limit it is
   * (`"the scheduler's --max-message-bytes"`), the comm staying open, instead
   * of being sent for the peer to close the connection on it. A limit not
   * lower than this end's own changes nothing. Absent where messages have no
   * size limit (in-process); a wrapper that lacks it sends as before.
   */
  limitSendsTo?(maxMessageBytes: number, whose: string): void;
  /**
   * The largest message this end accepts (its own `maxMessageBytes`): a
   * larger one arriving closes the connection. Absent where messages have no
   * size limit (in-process). A requester tells it to a peer whose answer may
   * be large (`get_data`), and a client or a worker to the scheduler when it
   * registers, so that the peer refuses to send more.
   */
  readonly maxMessageBytes?: number;
  /**
   * From now on, a message that arrived whole but a value of which cannot be
   * read (a cloned value that does not deserialize) is received as an
   * `UnreadableValueError` holding its `op` and `id`, the connection kept,
   * rather than closing the connection with that error: for a reader that can
   * answer for the one message (an rpc server or client). Absent where every
   * message is read (in-process); a wrapper that lacks it closes as before.
   */
  readUnreadable?(): void;
  /**
   * The next message. Rejects with a `CommClosedError` (whose `cause` is the
   * close error, if any) once the comm is closed and every message that
   * arrived before has been read.
   */
  recv(): Promise<unknown>;
  /**
   * Iterate over received messages; ends when the comm closes in an orderly
   * way, throws the close error when it broke.
   */
  [Symbol.asyncIterator](): AsyncIterator<unknown>;
  /**
   * Close in an orderly way: messages already sent are still delivered, then
   * the peer sees the comm closed. Resolves once closed. Idempotent.
   */
  close(): Promise<void>;
  /** Close at once, dropping what was not yet delivered; `error` becomes the close error. */
  abort(error?: Error): void;
  /**
   * Whether the open connection counts, for Node.js, as work keeping the
   * process alive (`socket.ref()`, the default) or not (`socket.unref()`): see
   * `LoopHold`. A close in progress always does, until it is done. An
   * in-process connection holds nothing of the event loop of its own: it
   * holds a timer while kept (else a program awaiting a result that nothing
   * else in the process was working on ended at once).
   */
  keepProcessAlive?(keep: boolean): void;
}

/** Accepts connections at an address. */
export interface Listener {
  /** The address it listens at, with the actual port (`tcp://127.0.0.1:0` becomes `:50123`). */
  readonly address: string;
  /** Stop accepting connections. Comms already accepted stay open. Idempotent. */
  close(): Promise<void>;
}

/**
 * Called with every accepted comm. It may be async: an exception it throws, or
 * a rejection of the promise it returns (its reader seeing the connection
 * break), aborts that comm and is otherwise dropped (catch what is to be
 * logged); the listener and the process go on.
 */
export type ConnectionHandler = (comm: Comm) => void;

/**
 * The TCP transport's size limits. Set the same on every process of a
 * cluster: a frame above the reader's `maxFrameBytes` closes the connection.
 */
export interface FrameLimits {
  /**
   * A message larger than this is sent in several frames of at most this
   * size, and a frame header announcing more closes the connection. Default
   * {@link DEFAULT_MAX_FRAME_BYTES}.
   */
  maxFrameBytes?: number;
  /**
   * The largest message sent or accepted: sending more rejects with a
   * `MessageTooLargeError` (the comm stays open); receiving more closes the
   * connection. Default {@link DEFAULT_MAX_MESSAGE_BYTES}.
   */
  maxMessageBytes?: number;
}

/**
 * What is wrong with the limits of `o` (a set one that is not an integer, or
 * out of range), or null. A message is assembled in one buffer, so
 * `maxMessageBytes` cannot exceed what one Node.js buffer holds.
 */
export function frameLimitsProblem(o: FrameLimits): string | null {
  const { maxFrameBytes: frame, maxMessageBytes: message } = o;
  if (frame !== undefined && (!Number.isInteger(frame) || frame < 1 || frame > MAX_FRAME_LENGTH)) {
    return `maxFrameBytes must be an integer from 1 to ${MAX_FRAME_LENGTH}, got ${showValue(frame)}`;
  }
  if (
    message !== undefined &&
    (!Number.isInteger(message) || message < 1 || message > bufferConstants.MAX_LENGTH)
  ) {
    return `maxMessageBytes must be an integer from 1 to ${bufferConstants.MAX_LENGTH} (the largest Node.js buffer), got ${showValue(message)}`;
  }
  return null;
}

/** Just the limits of `o` (options of a worker, scheduler or client), to pass to `connect` or `listen`. */
export function frameLimitsOf(o: FrameLimits): FrameLimits {
  return { maxFrameBytes: o.maxFrameBytes, maxMessageBytes: o.maxMessageBytes };
}

/** What a process's connections share: the frame limits, and TLS credentials for `tls://`. */
export interface CommOptions extends FrameLimits {
  /** The credentials of `tls://` connections (see `tls.ts`); `tls://` refuses to work without. */
  tls?: TlsCredentials;
}

/** Only the {@link CommOptions} of `o` (a process's options), to spread into `connect`/`listen` options. */
export function commOptionsOf(o: CommOptions): CommOptions {
  return { ...frameLimitsOf(o), ...(o.tls !== undefined ? { tls: o.tls } : {}) };
}

/** How long a TCP connection may stall; the in-process transport ignores them. */
export interface TcpTimeouts {
  /**
   * Close the connection (a `CommClosedError` saying so) when a message sent
   * is not taken by the peer for this long, per 16 MiB of messages waiting to
   * go out: a peer that stopped reading (a frozen process, a hostile one)
   * would otherwise hold what waits for that send (a worker's transfer slot,
   * the scheduler's queue to a client) until it disconnects. Default
   * {@link DEFAULT_STALL_TIMEOUT_MS}; at most 2^31 − 1 (about 24.8 days, the
   * longest timer of Node.js); `Infinity`: wait forever.
   */
  stallTimeoutMs?: number;
  /**
   * Idle time after which TCP keepalive probes start, so that a connection to a
   * peer that vanished without closing it (a machine switched off, a network
   * cut) ends instead of waiting forever for an answer. Default
   * {@link DEFAULT_KEEPALIVE_MS}; 0: no keepalive. Else from 1000 to
   * 32,767,000, counted in whole seconds (rounded down): Node.js gives the
   * kernel seconds, and Linux takes at most 32,767.
   */
  keepAliveMs?: number;
}

/** Options of `connect`. */
export interface ConnectOptions extends CommOptions, TcpTimeouts {
  /** Give up after this many milliseconds. Default 30,000 (Dask's `distributed.comm.timeouts.connect`). */
  timeoutMs?: number;
  /** Abort the attempt. */
  signal?: AbortSignal;
}

/** Options of `listen`: those of every comm it accepts. */
export interface ListenOptions extends CommOptions, TcpTimeouts {
  /**
   * TCP only: decode the large byte arrays and the cloned values of raw bytes
   * in received messages (task arguments and values) as opaque objects
   * holding their bytes as they arrived, in pieces, which are sent on as they
   * came (see `forwardedBytes.ts`), instead of joining the message into one
   * buffer and making them arrays. For a process that forwards task data
   * without reading it: the scheduler. Default false.
   */
  forwardOutOfBandBuffers?: boolean;
  /**
   * `tls://` only: told of each peer refused in the TLS handshake, which never
   * becomes a comm (a certificate the CA did not sign, or expired; none; a peer
   * that does not speak TLS), with its address and why, so that the process
   * can log it: the peer is told only that the connection closed. A peer that
   * hangs up before its handshake (a port check) is not told of. What it
   * throws, or a rejection of the promise it returns, is a process warning
   * (`process.emitWarning`), the listener going on.
   */
  onRefusedPeer?: (peer: string, reason: string) => void;
}

/** The default largest frame: 64 MiB (Dask's shard size). */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** The default largest message: 4 GiB − 1, about what one Node.js buffer holds. */
export const DEFAULT_MAX_MESSAGE_BYTES = 0xffff_ffff;

/** Default connect timeout in milliseconds. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Default {@link TcpTimeouts.stallTimeoutMs}: 60 s, twice Dask's
 * `distributed.comm.timeouts.tcp` (which Dask uses as `TCP_USER_TIMEOUT`), so
 * that a process merely busy for a while is not cut off.
 */
export const DEFAULT_STALL_TIMEOUT_MS = 60_000;

/** Default {@link TcpTimeouts.keepAliveMs}: 7 s, as Dask's TCP comms (`timeouts.tcp` / 4). */
export const DEFAULT_KEEPALIVE_MS = 7_000;
