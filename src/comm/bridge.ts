/**
 * Connections a pool thread makes through its worker's main thread: a task's
 * client (`getClient()`) on a pool thread reaches the scheduler and the
 * workers as the main thread would, whatever the transport (an `inproc://`
 * cluster lives in the main thread's realm; TLS credentials are the main
 * thread's). The thread asks on its executor's channel (a `dial` message); the
 * main thread connects and pumps messages between the real comm and a
 * `BroadcastChannel` of that connection alone, which only the two ends open.
 * Messages cross it encoded as on TCP (`wireCodec.ts`), so a thread's client
 * sees what a TCP client would. The size limits of the main thread's
 * connection, its own `maxMessageBytes` (which `open` tells) and the
 * scheduler's receive limit, which the client learns when it registers
 * (`limitSendsTo`), are applied on the thread, where the message is encoded
 * anyway: a send over either rejects there, the connection staying up.
 * Checked on the main thread instead, they could only abort the connection,
 * as a send resolves once posted and nothing answers it. A connect that fails
 * on the main thread fails on the thread with the same `ConnectError` (its
 * `code` too), so that a thread's client waits for a scheduler not up yet as
 * a main-thread client does (`connectWaiting`).
 */

import { BroadcastChannel, threadId } from "node:worker_threads";
import { asError } from "../util/asError.ts";
import { timeoutProblem, timeoutUnlessInfinite } from "../util/timers.ts";
import type { Comm } from "./comm.ts";
import { CommBase } from "./commBase.ts";
import { CommAbortedError, CommClosedError, ConnectError } from "./errors.ts";
import { forEachMessage } from "./forEachMessage.ts";
import { messageLength, messageSegments } from "./messageLayout.ts";
import { lowerPeerLimit, type PeerLimit, peerLimitBelow, sendLimitError } from "./peerLimit.ts";
import { UnreadableValueError } from "./unreadableValue.ts";
import {
  decodeMessage,
  type EncodedMessage,
  encodeMessage,
  type OutOfBandBuffer,
} from "./wireCodec.ts";

/** The thread's ask, on the executor's channel: connect to `address` for connection `id`. */
export interface DialMessage {
  readonly t: "dial";
  readonly id: string;
  /** The asking thread's `threadId`: its connections end when it does. */
  readonly thread: number;
  readonly address: string;
  /**
   * When (`Date.now()`) the thread stops waiting for the connection: one made
   * later is closed at once, as is one made after the thread said it stopped
   * waiting (`closed` on the connection's channel).
   */
  readonly deadline?: number;
}

/** What crosses a connection's channel, both ways. */
type BridgeFrame =
  /**
   * The main thread connected (to the thread). `maxMessageBytes`: the largest
   * message its connection sends (its own limit), which the thread applies,
   * with a limit given to its `limitSendsTo`; null where the connection has no
   * size limit (in-process).
   */
  | { readonly k: "open"; readonly maxMessageBytes: number | null }
  /** The main thread could not connect (to the thread), and why. */
  | { readonly k: "refused"; readonly failure: DialFailure }
  /** One message, encoded. */
  | {
      readonly k: "msg";
      readonly payload: Uint8Array;
      readonly buffers: readonly OutOfBandBuffer[];
    }
  /**
   * From the main thread: a message arrived whole on its connection but a
   * value in it cannot be read (an `UnreadableValueError`, of which the
   * request's or answer's `op` and `id` are kept, and what reading threw).
   */
  | {
      readonly k: "unreadable";
      readonly op: string | null;
      readonly id: number | null;
      readonly why: string;
    }
  /**
   * The other end closed: orderly (`error` null) or not. From the thread
   * before `open`: it stopped waiting for the connection (it timed out).
   */
  | { readonly k: "closed"; readonly error: string | null };

/**
 * Why the main thread's connect failed, as far as a structured clone keeps it
 * (it drops an error's class and own fields): enough to make the thread's
 * `ConnectError` the main thread's, which `isTransientConnectError` and
 * `connectWaiting` read (`code`, and the system's words in `cause`).
 */
interface DialFailure {
  readonly message: string;
  /** Null when what failed was not a `ConnectError` (a bad address, bad options). */
  readonly connect: {
    readonly code: string | null;
    readonly cause: { readonly message: string; readonly code: string | null } | null;
  } | null;
}

function dialFailureOf(err: unknown): DialFailure {
  const error = asError(err);
  if (!(error instanceof ConnectError)) return { message: error.message, connect: null };
  const cause = error.cause instanceof Error ? error.cause : null;
  return {
    message: error.message,
    connect: {
      code: error.code,
      cause: cause === null ? null : { message: cause.message, code: systemCode(cause) },
    },
  };
}

/** The `code` of a system error (`ECONNREFUSED`), or null. */
function systemCode(err: Error): string | null {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : null;
}

/** The thread's error for the main thread's failure to connect to `address`. */
function connectErrorOf(failure: DialFailure, address: string): ConnectError {
  const c = failure.connect;
  if (c === null)
    return new ConnectError(`cannot connect to ${address}: ${failure.message}`, address);
  const cause =
    c.cause === null
      ? undefined
      : Object.assign(new Error(c.cause.message), { code: c.cause.code });
  return new ConnectError(failure.message, address, c.code, { cause });
}

/** The name of connection `id`'s channel. */
function channelOf(executorChannel: string, id: string): string {
  return `${executorChannel}/bridge/${id}`;
}

function post(channel: BroadcastChannel, frame: BridgeFrame): void {
  channel.postMessage(frame);
}

function isFrame(v: unknown): v is BridgeFrame {
  return typeof v === "object" && v !== null && typeof (v as { k?: unknown }).k === "string";
}

/**
 * The message a `msg` frame carries. Its buffers crossed as plain
 * `Uint8Array`s (a structured clone drops `Buffer`'s prototype), which the
 * decoder reads as `Buffer`s: views of the same bytes, no copy.
 */
function decoded(frame: { payload: Uint8Array; buffers: readonly OutOfBandBuffer[] }): unknown {
  const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  return decodeMessage(
    asBuffer(frame.payload),
    frame.buffers.map((b) => (b instanceof Uint8Array ? asBuffer(b) : b.map(asBuffer))),
  );
}

const UNDECODABLE: unique symbol = Symbol("undecodable");

/** {@link decoded}, or, for a frame that cannot be decoded, `failed(why)` and {@link UNDECODABLE}. */
function decodedOr(
  frame: { payload: Uint8Array; buffers: readonly OutOfBandBuffer[] },
  failed: (err: Error) => void,
): unknown {
  try {
    return decoded(frame);
  } catch (err) {
    failed(asError(err));
    return UNDECODABLE;
  }
}

function encoded(msg: unknown): BridgeFrame {
  return frameOf(encodeMessage(msg));
}

function frameOf({ payload, buffers }: EncodedMessage): BridgeFrame {
  return { k: "msg", payload, buffers };
}

/** The frame of a message the main thread's connection could not read a value of. */
function unreadableFrame(err: UnreadableValueError): BridgeFrame {
  return {
    k: "unreadable",
    // What the readers use (a request's op, its id to answer), and cloneable.
    op: typeof err.op === "string" ? err.op : null,
    id: typeof err.id === "number" ? err.id : null,
    why: err.cause instanceof Error ? err.cause.message : err.message,
  };
}

/** The thread's error for a message its main thread's connection could not read a value of. */
function unreadableOf(frame: { op: string | null; id: number | null; why: string }) {
  return new UnreadableValueError(new Error(frame.why), {
    ...(frame.op !== null ? { op: frame.op } : {}),
    ...(frame.id !== null ? { id: frame.id } : {}),
  });
}

let nextId = 0;

/** The thread's end of a bridged connection. */
class BridgeComm extends CommBase {
  readonly localAddress: string;
  /** The peer's receive limit given to {@link limitSendsTo}, when lower than {@link ownLimit}. */
  private peerLimit: PeerLimit | null = null;
  /**
   * As TCP's (see `Comm.limitSendsTo`), applied here; only where the main
   * thread's connection has it (an in-process one takes any size).
   */
  readonly limitSendsTo?: (maxMessageBytes: number, whose: string) => void;
  /** The main thread's connection's own limit, which this applies too; absent with none. */
  readonly maxMessageBytes?: number;
  /** See {@link readUnreadable}. */
  private readsUnreadable = false;

  constructor(
    readonly peerAddress: string,
    id: string,
    private readonly channel: BroadcastChannel,
    /** The main thread's connection's own `maxMessageBytes`; null: it has no size limit. */
    private readonly ownLimit: number | null,
  ) {
    super();
    this.localAddress = `bridge://${id}`;
    if (ownLimit !== null) {
      this.limitSendsTo = (n, whose) => (this.peerLimit = peerLimitBelow(n, whose, ownLimit));
      this.maxMessageBytes = ownLimit;
    }
    channel.onmessage = (ev: unknown) => this.onFrame((ev as { data?: unknown }).data);
    void this.closed.then(() => channel.close());
  }

  private onFrame(frame: unknown): void {
    if (!isFrame(frame) || this.isClosed) return;
    if (frame.k === "msg") {
      const msg = decodedOr(frame, (err) => this.abort(err));
      if (msg !== UNDECODABLE) this.deliver(msg);
    } else if (frame.k === "unreadable") {
      // As a TCP comm: received by a reader that asked, else the connection closes with it.
      const err = unreadableOf(frame);
      if (this.readsUnreadable) this.deliver(err);
      else this.abort(err);
    } else if (frame.k === "closed") {
      this.finish(frame.error === null ? null : new CommClosedError(frame.error));
    }
  }

  /**
   * As a TCP comm's: the main thread's connection always reads a message with
   * a value that cannot be read as the error (see `serveBridge`), and this end
   * closes the connection with it unless its reader asked to receive it.
   */
  readUnreadable(): void {
    this.readsUnreadable = true;
  }

  send(msg: unknown, limit?: PeerLimit): Promise<void> {
    if (this.isClosed) return Promise.reject(this.closedError());
    try {
      const message = encodeMessage(msg);
      if (this.ownLimit !== null) {
        // Its length on TCP, which the limits count: the main thread's
        // connection would refuse it as this does, but only by aborting.
        const length = messageLength(messageSegments(message));
        const over = sendLimitError(
          length,
          this.ownLimit,
          lowerPeerLimit(this.peerLimit, limit, this.ownLimit),
        );
        if (over !== null) throw over;
      }
      post(this.channel, frameOf(message));
    } catch (err) {
      // A SerializationError for what cannot be encoded, a MessageTooLargeError
      // for what the main thread or the peer would not take: the comm stays open.
      return Promise.reject(err);
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (!this.isClosed) {
      post(this.channel, { k: "closed", error: null });
      this.finish(null);
    }
    return this.closed.then(() => undefined);
  }

  abort(error?: Error): void {
    if (this.isClosed) return;
    post(this.channel, { k: "closed", error: error?.message ?? "aborted" });
    this.finish(error ?? new CommAbortedError("comm aborted"), true);
  }
}

/**
 * How long past its timeout, by the monotonic clock, a pool thread's dial may
 * wait for `Date.now()` to reach the deadline the main thread checks: timers
 * fire a ms or so early by `Date.now()`, and only a wall clock stepped back
 * (an NTP step) makes it more, by the step.
 */
export const BRIDGE_CLOCK_SLACK_MS = 1000;

/** Why a pool thread's dial is closed when the main thread makes it for nobody. */
const STOPPED_WAITING = "the pool thread stopped waiting for the connection";

/**
 * On a pool thread: connect to `address` through the main thread of the
 * executor whose channel is `executorChannel` (`ask` posts the dial there).
 * Rejects with the main thread's `ConnectError` (its message and `code`) if it
 * cannot connect, or with one coded `ETIMEDOUT` if it does not answer within
 * `timeoutMs`; with `signal`'s reason once it is aborted, as `connect` does.
 */
export function dialThroughBridge(
  executorChannel: string,
  ask: (dial: DialMessage) => void,
  address: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Comm> {
  const badTimeout = timeoutProblem(timeoutMs);
  if (badTimeout !== null) return Promise.reject(new RangeError(badTimeout));
  if (signal?.aborted) return Promise.reject(signal.reason);
  const id = `${threadId}-${++nextId}`;
  const channel = new BroadcastChannel(channelOf(executorChannel, id));
  const deadline = Date.now() + timeoutMs;
  const latest = performance.now() + timeoutMs + BRIDGE_CLOCK_SLACK_MS;
  return new Promise<Comm>((resolve, reject) => {
    const giveUp = () => {
      // Timers count on the event loop's own clock, not Date.now(), and fire up to a ms
      // early by it (4 % of 50 ms timers here): early by the deadline the main thread
      // checks, this thread would give up while the main thread still saw time left and
      // connected for nobody (the "closed" frame below, posted before the main thread
      // listens, is not seen). Never past `latest` by the monotonic clock, though: a
      // wall clock stepped back meanwhile would hold the dial as long again.
      const left = Math.min(deadline - Date.now(), latest - performance.now());
      if (left > 0) {
        timer = setTimeout(giveUp, left);
        return;
      }
      stopWaiting(
        new ConnectError(
          `timed out connecting to ${address} through the worker's main thread`,
          address,
          "ETIMEDOUT",
        ),
      );
    };
    const stopWaiting = (err: unknown) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      // The main thread closes the connection if it makes it now.
      post(channel, { k: "closed", error: STOPPED_WAITING });
      channel.close();
      reject(err);
    };
    // A Client.connect's signal, a PeerPool's remove: else the try went on to its timeout.
    // Rejected at once; the channel still hears the main thread's answer until the
    // deadline, to close a connection it made: the "closed" frame posted here before it
    // listens is not seen, and no deadline tells it that nobody waits.
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      post(channel, { k: "closed", error: STOPPED_WAITING });
      reject(signal?.reason);
    };
    let timer = timeoutUnlessInfinite(giveUp, timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    channel.onmessage = (ev: unknown) => {
      const frame = (ev as { data?: unknown }).data;
      if (!isFrame(frame)) return;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (abandoned) {
        if (frame.k === "open") post(channel, { k: "closed", error: STOPPED_WAITING });
        channel.close();
        return;
      }
      if (frame.k === "open") {
        resolve(new BridgeComm(address, id, channel, frame.maxMessageBytes));
        return;
      }
      channel.close();
      reject(
        frame.k === "refused"
          ? connectErrorOf(frame.failure, address)
          : new ConnectError(`cannot connect to ${address}: unexpected answer`, address),
      );
    };
    ask({ t: "dial", id, thread: threadId, address, deadline });
  });
}

/**
 * On the main thread: answer a thread's {@link DialMessage} by connecting
 * with `dial` and pumping messages until either end closes. Resolves once the
 * bridged connection is over; `signal` ends it at once (the thread gone, or
 * the executor closing: a thread that ends cannot say so itself).
 * `maxMessageBytes` is the own limit of the connections `dial` makes that
 * limit sizes (those with `limitSendsTo`), which the thread applies. A
 * connection made once the thread stopped waiting for it (past its deadline,
 * or told so) is closed at once rather than kept open for nobody.
 */
export async function serveBridge(
  executorChannel: string,
  msg: DialMessage,
  dial: (address: string) => Promise<Comm>,
  signal: AbortSignal,
  maxMessageBytes: number,
): Promise<void> {
  const channel = new BroadcastChannel(channelOf(executorChannel, msg.id));
  channel.unref();
  // Listened for while connecting: the thread says when it stops waiting.
  let gaveUp = false;
  channel.onmessage = (ev: unknown) => {
    const frame = (ev as { data?: unknown }).data;
    if (isFrame(frame) && frame.k === "closed") gaveUp = true;
  };
  const nobodyWaits = () => gaveUp || (msg.deadline !== undefined && Date.now() >= msg.deadline);
  if (nobodyWaits()) {
    channel.close();
    return;
  }
  let comm: Comm;
  try {
    comm = await dial(msg.address);
  } catch (err) {
    post(channel, { k: "refused", failure: dialFailureOf(err) });
    channel.close();
    return;
  }
  if (nobodyWaits()) {
    comm.abort(
      new CommAbortedError(`the pool thread stopped waiting for its connection to ${msg.address}`),
    );
    channel.close();
    return;
  }
  // A message with a value that cannot be read is handed to the thread, whose reader
  // receives it if it asked (an rpc, which fails that call alone), or closes the
  // connection with it: read by nobody here, it closed the connection under any reader.
  comm.readUnreadable?.();
  const onAbort = () => comm.abort(new CommAbortedError("the worker's executor closed"));
  if (signal.aborted) onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  channel.onmessage = (ev: unknown) => {
    const frame = (ev as { data?: unknown }).data;
    if (!isFrame(frame)) return;
    if (frame.k === "msg") {
      const m = decodedOr(frame, (err) => comm.abort(err));
      if (m === UNDECODABLE) return;
      comm.send(m).catch((err: unknown) => comm.abort(asError(err)));
    } else if (frame.k === "closed") {
      if (frame.error === null) void comm.close();
      else comm.abort(new CommClosedError(frame.error));
    }
  };
  post(channel, {
    k: "open",
    maxMessageBytes: comm.limitSendsTo !== undefined ? maxMessageBytes : null,
  });
  let error: string | null = null;
  try {
    await forEachMessage(comm, (m) => {
      try {
        post(channel, m instanceof UnreadableValueError ? unreadableFrame(m) : encoded(m));
      } catch (err) {
        comm.abort(asError(err));
      }
    });
  } catch (err) {
    error = asError(err).message;
  }
  const info = await comm.closed;
  post(channel, { k: "closed", error: error ?? info.error?.message ?? null });
  signal.removeEventListener("abort", onAbort);
  channel.close();
}

/** True if `m` is a {@link DialMessage}. */
export function isDialMessage(m: unknown): m is DialMessage {
  if (typeof m !== "object" || m === null) return false;
  const { t, id, thread, address, deadline } = m as Record<string, unknown>;
  return (
    t === "dial" &&
    typeof id === "string" &&
    typeof thread === "number" &&
    typeof address === "string" &&
    (deadline === undefined || typeof deadline === "number")
  );
}
