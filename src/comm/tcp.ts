/**
 * The TCP transport: `tcp://host:port`; each message is {@link encodeMessage}'s
 * payload and out-of-band buffers (laid out as `messageLayout.ts` says), in one
 * frame or, when larger than `maxFrameBytes`, several (see `framing.ts`).
 * `tls://host:port` is the same over TLS, both ends showing a certificate of
 * the cluster's CA (see `tls.ts`).
 */

import { type AddressInfo, createServer, connect as netConnect, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket, connect as tlsConnect } from "node:tls";
import { parseHostPort, splitScheme } from "../util/address.ts";
import { warnCallbackFailed } from "../util/callbackWarning.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { formatBytes } from "../util/parseBytes.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS, timeoutProblem, timeoutUnlessInfinite } from "../util/timers.ts";
import {
  type Comm,
  type ConnectionHandler,
  type ConnectOptions,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_STALL_TIMEOUT_MS,
  type FrameLimits,
  frameLimitsProblem,
  type Listener,
  type ListenOptions,
  type TcpTimeouts,
} from "./comm.ts";
import { CommBase } from "./commBase.ts";
import { CommAbortedError, CommClosedError, ConnectError } from "./errors.ts";
import { piecesLength } from "./forwardedBytes.ts";
import { FrameReader, framesOf } from "./framing.ts";
import {
  messageLength,
  messageSegments,
  splitMessage,
  splitMessagePieces,
} from "./messageLayout.ts";
import { lowerPeerLimit, type PeerLimit, peerLimitBelow, sendLimitError } from "./peerLimit.ts";
import { secureContextFor, type TlsCredentials } from "./tls.ts";
import { handshakeFailureReason, unauthorizedPeerReason } from "./tlsRefusals.ts";
import { UnreadableValueError } from "./unreadableValue.ts";
import { decodeMessage, encodeMessage } from "./wireCodec.ts";

/** How long `close()` waits for the peer to close its side before destroying the socket. */
const CLOSE_GRACE_MS = 5_000;

/**
 * A message at least this large, sent since the last one received to a peer
 * whose limit is not known, is named when the peer resets the connection: a
 * peer that did not tell its `maxMessageBytes` (or whose limit was not applied)
 * resets it on one larger. Smaller ones are not: the peer more likely went away.
 * Nor is one sent within a limit the peer told (`limitSendsTo`, or a send's own:
 * the answer to a request that said it), which cannot have been over it: the peer
 * went away (a client killed while it gathered), and the hint misled.
 */
const SUSPECT_MESSAGE_BYTES = 64 * 1024;

/**
 * The longest `keepAliveMs`: Node.js gives the kernel whole seconds, and Linux
 * takes at most 32,767 (`MAX_TCP_KEEPIDLE`), keeping its default of 2 h for more.
 */
const MAX_KEEPALIVE_MS = 32_767_000;

/**
 * The bytes of messages arrived and not read yet past which a comm stops
 * reading its socket (see `CommBase.maxUnreadBytes`): the peer's further
 * sends then wait in the kernel's buffers and its own, as a TCP peer that
 * does not read makes them wait. A message larger than this stops reading
 * only until it is read.
 */
export const MAX_UNREAD_BYTES = 16 * 1024 * 1024;

/** The bytes waiting to go out that earn one `stallTimeoutMs` (see {@link TcpTimeouts}). */
const STALL_BYTES = 16 * 1024 * 1024;

const FORWARD = { forward: true } as const;

/** The schemes of this transport: plain TCP, and TCP over TLS. */
export type TcpScheme = "tcp" | "tls";

/** `tcp://host:port` (or `tls://`), with brackets around IPv6 hosts. */
export function tcpAddress(
  host: string | undefined,
  port: number | undefined,
  scheme: TcpScheme = "tcp",
): string {
  const h = host ?? "unknown";
  return h.includes(":") ? `${scheme}://[${h}]:${port ?? 0}` : `${scheme}://${h}:${port ?? 0}`;
}

/** The scheme of `address` (`tls` or, bare or not, `tcp`), and for `tls` the credentials it needs. */
function schemeOf(
  address: string,
  tls: TlsCredentials | undefined,
): { scheme: TcpScheme; tls: TlsCredentials | null } {
  if (splitScheme(address).scheme !== "tls") return { scheme: "tcp", tls: null };
  if (tls === undefined) {
    throw new Error(
      `${address}: tls:// needs TLS credentials (the tls option: ca, cert, key; on the command line --tls-ca-file, --tls-cert, --tls-key)`,
    );
  }
  secureContextFor(tls); // throws, saying why, for credentials that cannot be used
  return { scheme: "tls", tls };
}

/** The limits of `options`, defaults filled in; throws a `RangeError` for bad ones. */
function resolveFrameLimits(options: FrameLimits): Required<FrameLimits> {
  const problem = frameLimitsProblem(options);
  if (problem !== null) throw new RangeError(problem);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  return { maxFrameBytes, maxMessageBytes };
}

/** The timeouts of `options`, defaults filled in; throws a `RangeError` for bad ones. */
function resolveTimeouts(options: TcpTimeouts): Required<TcpTimeouts> {
  const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS;
  // A longer timer of Node.js fires at once (after 1 ms, with a warning).
  if (
    typeof stallTimeoutMs !== "number" ||
    !(stallTimeoutMs > 0 && (stallTimeoutMs <= MAX_TIMER_MS || stallTimeoutMs === Infinity))
  ) {
    throw new RangeError(
      `stallTimeoutMs must be a positive number of ms, at most ${MAX_TIMER_MS} (about 24.8 days), or Infinity (no limit), got ${showValue(stallTimeoutMs)}`,
    );
  }
  // Node.js gives the kernel whole seconds: less than one would be 0, the
  // system's default (2 h on Linux), not a short keepalive.
  if (
    !Number.isInteger(keepAliveMs) ||
    !(keepAliveMs === 0 || (keepAliveMs >= 1000 && keepAliveMs <= MAX_KEEPALIVE_MS))
  ) {
    throw new RangeError(
      `keepAliveMs must be 0 (no keepalive) or an integer of ms from 1000 to ${MAX_KEEPALIVE_MS} (keepalive counts whole seconds, at most 32,767 on Linux), got ${showValue(keepAliveMs)}`,
    );
  }
  return { stallTimeoutMs, keepAliveMs };
}

/** A comm over a connected socket. */
export class TcpComm extends CommBase {
  readonly localAddress: string;
  readonly peerAddress: string;
  private readonly reader: FrameReader;
  private closing = false;
  private endError: Error | null = null;
  /** Whether any byte came from the peer. */
  private receivedAny = false;
  /** Sends handed to the socket and not yet written out, and their bytes. */
  private unsentMessages = 0;
  private unsentBytes = 0;
  /** `performance.now()` when a send last completed, or when the first unsent one started. */
  private sendProgressAt = 0;
  /**
   * `performance.now()` when bytes last came from the peer. A peer sending is
   * not stalled even while it reads nothing of this end: it may hold back its
   * reading until what it sends is taken (a scheduler answering a client at its
   * bound, a worker's rpc server: see `answerBacklog.ts`, `answersInFlight.ts`),
   * which this end, reading, is doing. Only a peer that neither reads nor
   * sends is cut off (see {@link checkStall}).
   */
  private receivedAt = 0;
  private stallTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * The largest message sent, to a peer whose limit is not known, since one was last
   * received (see {@link SUSPECT_MESSAGE_BYTES}).
   */
  private largestUnanswered = 0;
  /** The peer's receive limit when lower than this end's own (see {@link limitSendsTo}). */
  private peerLimit: PeerLimit | null = null;
  /** True once the peer told its receive limit, lower than this end's or not. */
  private peerLimitKnown = false;
  /** See {@link readUnreadable}. */
  private readsUnreadable = false;

  constructor(
    private readonly socket: Socket,
    private readonly limits: Required<FrameLimits> = resolveFrameLimits({}),
    private readonly timeouts: Required<TcpTimeouts> = resolveTimeouts({}),
    /** See {@link ListenOptions.forwardOutOfBandBuffers}. */
    private readonly forward = false,
    scheme: TcpScheme = "tcp",
    /**
     * Why the peer may reset the connection before sending anything (a dialled
     * TLS connection: the peer refused this end's certificate, and TLS 1.3 lets
     * the handshake end on this side first; a weft listener refuses with a
     * reset), said if it does; null: nothing to say. An orderly close is none.
     */
    private readonly silentResetHint: string | null = null,
  ) {
    super();
    this.reader = new FrameReader(limits.maxFrameBytes, limits.maxMessageBytes);
    this.localAddress = tcpAddress(socket.localAddress, socket.localPort, scheme);
    this.peerAddress = tcpAddress(socket.remoteAddress, socket.remotePort, scheme);
    socket.setNoDelay(true);
    if (timeouts.keepAliveMs > 0) socket.setKeepAlive(true, timeouts.keepAliveMs);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("end", () => this.onEnd());
    socket.on("error", (err: NodeJS.ErrnoException) => {
      this.endError ??=
        isReset(err) && !this.receivedAny && this.silentResetHint !== null && !this.closing
          ? new CommClosedError(
              `connection to ${this.peerAddress} closed before anything arrived: ${this.silentResetHint}`,
              { cause: err },
            )
          : new CommClosedError(
              `connection to ${this.peerAddress} failed: ${err.message}${this.resetHint(err)}`,
              { cause: err },
            );
    });
    socket.on("close", () => {
      this.stopStallTimer();
      this.finish(this.endError);
    });
  }

  private onData(chunk: Buffer): void {
    if (this.isClosed) return;
    this.receivedAny = true;
    this.receivedAt = performance.now();
    // The messages the chunk completed, even when bytes after them are refused.
    const messages: (Buffer | Buffer[])[] = [];
    let refused: Error | null = null;
    try {
      if (this.forward) this.reader.pushPieces(chunk, messages as Buffer[][]);
      else this.reader.push(chunk, messages as Buffer[]);
    } catch (err) {
      refused = err as Error;
    }
    for (const bytes of messages) {
      let msg: unknown;
      const length = Array.isArray(bytes) ? piecesLength(bytes) : bytes.length;
      try {
        if (Array.isArray(bytes)) {
          const { payload, buffers } = splitMessagePieces(bytes);
          msg = decodeMessage(payload, buffers, FORWARD);
        } else {
          const { payload, buffers } = splitMessage(bytes);
          msg = decodeMessage(payload, buffers);
        }
      } catch (err) {
        // Only a value lost, the framing intact: the reader that asked answers for it.
        if (err instanceof UnreadableValueError && this.readsUnreadable) msg = err;
        else {
          this.failTransport(err as Error);
          return;
        }
      }
      this.largestUnanswered = 0;
      this.deliver(msg, length);
    }
    if (refused !== null) this.failTransport(refused);
  }

  /**
   * Close the connection on a failure of the transport: bytes it received that
   * cannot be read (a frame header over the limit, a frame that does not
   * decode), or a peer that stopped reading. Unlike `abort()`, the messages
   * that arrived whole before stay readable.
   */
  private failTransport(error: Error): void {
    if (this.isClosed) return;
    this.stopStallTimer();
    this.closing = true;
    this.finish(error);
    this.socket.destroy();
  }

  /**
   * What to add to the error of a connection the peer reset (`err`) after a
   * large message was sent to it, its limit not known: that limit may be why,
   * which only its log can tell (the reset says nothing). Empty otherwise.
   */
  private resetHint(err: NodeJS.ErrnoException): string {
    if (!isReset(err) || this.largestUnanswered < SUSPECT_MESSAGE_BYTES) return "";
    return ` (after a message of ${formatBytes(this.largestUnanswered)} was sent to it: larger than the peer's --max-message-bytes? Its log says)`;
  }

  private onEnd(): void {
    if (this.reader.pendingBytes > 0 || this.reader.expectedBytes >= 0) {
      const expected = this.reader.expectedBytes;
      this.endError ??= new CommClosedError(
        expected >= 0
          ? `connection to ${this.peerAddress} closed mid-message: received ${this.reader.pendingBytes} of ${expected} bytes`
          : `connection to ${this.peerAddress} closed mid-message: ${this.reader.pendingBytes} bytes of it received`,
      );
    }
  }

  protected override get maxUnreadBytes(): number {
    return MAX_UNREAD_BYTES;
  }

  protected override pauseReading(): void {
    this.socket.pause();
  }

  protected override resumeReading(): void {
    this.socket.resume();
  }

  /** This end's own limit (see `Comm.maxMessageBytes`). */
  get maxMessageBytes(): number {
    return this.limits.maxMessageBytes;
  }

  send(msg: unknown, limit?: PeerLimit): Promise<void> {
    if (this.closing || this.isClosed) return Promise.reject(this.closedError());
    let segments: Uint8Array[];
    try {
      segments = messageSegments(encodeMessage(msg));
    } catch (err) {
      return Promise.reject(err);
    }
    const { maxFrameBytes, maxMessageBytes } = this.limits;
    const length = messageLength(segments);
    const tooLarge = sendLimitError(
      length,
      maxMessageBytes,
      lowerPeerLimit(this.peerLimit, limit, maxMessageBytes),
    );
    if (tooLarge !== null) return Promise.reject(tooLarge);
    if (limit === undefined && !this.peerLimitKnown) {
      this.largestUnanswered = Math.max(this.largestUnanswered, length);
    }
    return new Promise<void>((resolve, reject) => {
      const socket = this.socket;
      const frames = framesOf(segments, maxFrameBytes);
      this.sendStarted(length);
      socket.cork();
      for (let i = 0; i < frames.length - 1; i++) socket.write(frames[i]);
      socket.write(frames[frames.length - 1], (err) => {
        this.sendDone(length);
        // A send queued behind one the comm was closed on (a stall, an abort): the
        // write fails as the socket is gone ("Cannot call write after a stream was
        // destroyed"), which says nothing of why: the close's error does.
        if (err && (err as NodeJS.ErrnoException).code === "ERR_STREAM_DESTROYED" && this.isClosed)
          reject(this.closedError());
        else if (err)
          reject(
            this.brokenUnderSend(
              new CommClosedError(
                `send to ${this.peerAddress} failed: ${err.message}${this.resetHint(err)}`,
                { cause: err },
              ),
            ),
          );
        // A socket destroyed with the write pending calls back without an error, and
        // may do so before the comm hears of its close (a peer's reset): the bytes were
        // not all taken, and a send resolved so was counted as delivered.
        else if (this.isClosed) reject(this.closedError());
        else if (socket.destroyed) reject(this.brokenUnderSend(this.destroyedUnderSend()));
        else resolve();
      });
      socket.uncork();
    });
  }

  /**
   * The connection broke under a send (`error`, returned): the comm closes now,
   * as the socket's close would a moment later, the messages that arrived whole
   * staying readable; with the send's error, as the sender's abort closed it (a
   * worker tells by it that its stream's failure was said already). Left open, the sender's reaction to the failed send
   * (`BatchedSend` aborts the comm) dropped them: a scheduler holding a client's
   * frames unread while its answers were in flight lost what the client sent
   * before it went (a `log-event`, a `publish-dataset`), which it handles for
   * their effects.
   */
  private brokenUnderSend(error: CommClosedError): CommClosedError {
    this.failTransport(error);
    return error;
  }

  /** The error of a send whose socket was destroyed under it, before the comm closed. */
  private destroyedUnderSend(): CommClosedError {
    const why = this.endError;
    return new CommClosedError(
      why === null
        ? `send to ${this.peerAddress} failed: the connection closed under it`
        : `send to ${this.peerAddress} failed: ${why.message}`,
      why === null ? undefined : { cause: why },
    );
  }

  readUnreadable(): void {
    this.readsUnreadable = true;
  }

  limitSendsTo(maxMessageBytes: number, whose: string): void {
    this.peerLimit = peerLimitBelow(maxMessageBytes, whose, this.limits.maxMessageBytes);
    this.peerLimitKnown = true;
  }

  private sendStarted(bytes: number): void {
    if (this.unsentMessages === 0) this.sendProgressAt = performance.now();
    this.unsentMessages++;
    this.unsentBytes += bytes;
    if (this.stallTimer === null && Number.isFinite(this.timeouts.stallTimeoutMs)) {
      this.armStallTimer(this.timeouts.stallTimeoutMs);
    }
  }

  private sendDone(bytes: number): void {
    this.unsentMessages--;
    this.unsentBytes -= bytes;
    this.sendProgressAt = performance.now();
  }

  private armStallTimer(ms: number): void {
    // Much queued data may allow longer than a timer waits: checked again then.
    this.stallTimer = setTimeout(() => this.checkStall(), Math.min(ms, MAX_TIMER_MS));
    this.stallTimer.unref();
  }

  /**
   * The connection is done with: its stall timer goes too. Left armed (up to
   * a minute), it held the closed comm, and through its socket and server the
   * whole closed client or retired worker, in memory.
   */
  private stopStallTimer(): void {
    if (this.stallTimer === null) return;
    clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }

  /** Abort when no send completed, nor anything came, for longer than the unsent bytes allow. */
  private checkStall(): void {
    this.stallTimer = null;
    if (this.unsentMessages === 0 || this.isClosed) return;
    const allowed = this.timeouts.stallTimeoutMs * Math.max(1, this.unsentBytes / STALL_BYTES);
    const waited = performance.now() - Math.max(this.sendProgressAt, this.receivedAt);
    if (waited < allowed) {
      this.armStallTimer(allowed - waited);
      return;
    }
    this.failTransport(
      new CommClosedError(
        `${this.peerAddress} stopped reading: ${this.unsentBytes} bytes sent to it were not taken for ${Math.round(waited)} ms`,
      ),
    );
  }

  keepProcessAlive(keep: boolean): void {
    if (this.closing || this.isClosed) return;
    if (keep) this.socket.ref();
    else this.socket.unref();
  }

  close(): Promise<void> {
    if (!this.closing && !this.isClosed) {
      this.closing = true;
      // Awaited by whoever closes: what was sent must reach the peer before the process ends.
      this.socket.ref();
      const timer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
      timer.unref();
      this.socket.once("close", () => clearTimeout(timer));
      // The peer's own end comes after what it sent: read on, so that it is seen.
      this.readToTheEnd();
      this.socket.end();
    }
    return this.closed.then(() => undefined);
  }

  abort(error?: Error): void {
    if (this.isClosed) return;
    this.stopStallTimer();
    this.closing = true;
    this.finish(error ?? new CommAbortedError(`comm to ${this.peerAddress} aborted`), true);
    this.socket.destroy();
  }
}

/**
 * Connect to `tcp://host:port`, or `tls://host:port` with `options.tls`.
 * Rejects with a {@link ConnectError} (for TLS, also when the handshake fails:
 * a peer whose certificate the CA did not sign, or that refuses this one's).
 */
export function connectTcp(address: string, options: ConnectOptions = {}): Promise<Comm> {
  const limits = resolveFrameLimits(options);
  const timeouts = resolveTimeouts(options);
  const { scheme, tls } = schemeOf(address, options.tls);
  const { host, port } = parseHostPort(splitScheme(address).location);
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const badTimeout = timeoutProblem(timeoutMs);
  if (badTimeout !== null) throw new RangeError(badTimeout);
  const signal = options.signal;
  return new Promise<Comm>((resolve, reject) => {
    signal?.throwIfAborted();
    // The peer's certificate must be signed by the CA; its host name is not checked (see tls.ts).
    const socket =
      tls === null
        ? netConnect({ host, port })
        : tlsConnect({
            host,
            port,
            secureContext: secureContextFor(tls),
            rejectUnauthorized: true,
            checkServerIdentity: () => undefined,
          });
    const connected = tls === null ? "connect" : "secureConnect";
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      socket.removeListener(connected, onConnect);
      socket.removeListener("error", onError);
    };
    const fail = (err: unknown) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    // Its reason as given, as a signal aborted already is thrown (throwIfAborted).
    const onAbort = () => fail(signal?.reason);
    const onConnect = () => {
      cleanup();
      resolve(
        new TcpComm(socket, limits, timeouts, false, scheme, tls === null ? null : TLS_REFUSAL),
      );
    };
    const onError = (err: NodeJS.ErrnoException) => {
      const code = err.code ?? null;
      const what =
        code === "ECONNREFUSED"
          ? "refused"
          : tls !== null && isTlsError(err)
            ? `failed: the TLS handshake failed: ${err.message}`
            : tls !== null && code === "ECONNRESET"
              ? `failed: the peer closed it during the TLS handshake: ${TLS_HANGUP}`
              : `failed: ${err.message}`;
      fail(
        new ConnectError(
          `connection to ${address} ${what}${code ? ` (${code})` : ""}`,
          address,
          code,
          {
            cause: err,
          },
        ),
      );
    };
    const timer = timeoutUnlessInfinite(
      () =>
        fail(
          new ConnectError(
            `timed out connecting to ${address} after ${timeoutMs} ms`,
            address,
            "ETIMEDOUT",
          ),
        ),
      timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.once(connected, onConnect);
    socket.once("error", onError);
  });
}

/** Why a TLS peer may reset a connection it accepted before saying anything. */
const TLS_REFUSAL =
  "the peer may have refused this process's TLS certificate (is it signed by the CA the peer trusts?)";

/** Why a peer may close a connection in the middle of the TLS handshake. */
const TLS_HANGUP =
  "does it listen on tcp:// rather than tls://, or refuse this process's certificate (is it signed by the CA the peer trusts)?";

/** The peer reset the connection (or it was reset under a write). */
function isReset(err: NodeJS.ErrnoException): boolean {
  return err.code === "ECONNRESET" || err.code === "EPIPE";
}

/** What tells a listener's connections apart: the peer's address and port. */
function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

/** True for an error of TLS rather than of the network (a certificate refused, a protocol mismatch). */
function isTlsError(err: NodeJS.ErrnoException): boolean {
  const code = err.code ?? "";
  return (
    code.startsWith("ERR_SSL") ||
    code.startsWith("ERR_TLS") ||
    /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code) ||
    err.message.includes("alert")
  );
}

/**
 * Listen at `tcp://host:port` (port 0: any free port; the listener's address
 * tells which), or `tls://host:port` with `options.tls`: then only peers
 * showing a certificate the CA signed get through the handshake (the others
 * are dropped unseen).
 */
export async function listenTcp(
  address: string,
  handler: ConnectionHandler,
  options: ListenOptions = {},
): Promise<Listener> {
  const limits = resolveFrameLimits(options);
  const timeouts = resolveTimeouts(options);
  const { scheme, tls } = schemeOf(address, options.tls);
  const { host, port } = parseHostPort(splitScheme(address).location, 0);
  const forward = options.forwardOutOfBandBuffers === true;
  const refused = (socket: Socket, reason: string, reset = false) => {
    const peer = tcpAddress(socket.remoteAddress, socket.remotePort, scheme);
    const raw = reset ? rawSockets.get(connectionKey(socket)) : undefined;
    // A reset (RST) rather than a close, so that the peer, whose TLS 1.3
    // handshake may be over, tells a refusal from an orderly close. The TLS
    // socket has no reset of its own: the TCP socket beneath it has.
    if (raw !== undefined) raw.resetAndDestroy();
    else socket.destroy();
    // Called from the socket's event: a throw was the process's uncaught exception.
    callGuarded(
      () => options.onRefusedPeer?.(peer, reason),
      (err) => warnCallbackFailed("listen onRefusedPeer failed", err),
    );
  };
  /** The TCP sockets beneath TLS ones, by {@link connectionKey}. */
  const rawSockets = new Map<string, Socket>();
  const accept = (socket: Socket) => {
    if (socket.destroyed) return;
    // The peer's certificate is checked here rather than by OpenSSL in the handshake
    // (rejectUnauthorized below), which dropped the peer before why could be known.
    // Nothing of it has been read: it is refused before it becomes a comm.
    if (tls !== null && !(socket as TLSSocket).authorized) {
      const peer = socket as TLSSocket;
      const showed = Object.keys(peer.getPeerCertificate()).length > 0;
      refused(socket, unauthorizedPeerReason(peer.authorizationError, showed), true);
      return;
    }
    handler(new TcpComm(socket, limits, timeouts, forward, scheme));
  };
  const server =
    tls === null
      ? createServer({ noDelay: true }, accept)
      : createTlsServer(
          {
            // tls.createServer takes no secureContext: the credentials themselves (checked above).
            ca: tls.ca,
            cert: tls.cert,
            key: tls.key,
            noDelay: true,
            requestCert: true,
            // Checked in accept, which refuses every peer OpenSSL did not authorize.
            rejectUnauthorized: false,
          },
          accept,
        );
  if (tls !== null) {
    server.on("connection", (raw: Socket) => {
      const key = connectionKey(raw);
      rawSockets.set(key, raw);
      raw.once("close", () => {
        if (rawSockets.get(key) === raw) rawSockets.delete(key);
      });
    });
  }
  // A peer that failed the handshake never became a comm: the process is told why.
  server.on("tlsClientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    const why = handshakeFailureReason(err);
    if (why === null) socket.destroy();
    else refused(socket, why);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: host === "" ? undefined : host, port }, () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
  server.on("error", () => {
    // Errors of accepted sockets are reported on their comms.
  });
  const info = server.address() as AddressInfo;
  const bound = tcpAddress(info.address, info.port, scheme);
  let open = true;
  return {
    address: bound,
    async close(): Promise<void> {
      if (!open) return;
      open = false;
      // Stops accepting; comms already accepted stay open.
      server.close();
    },
  };
}
