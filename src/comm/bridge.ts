/**
 * Connections a pool thread makes through its worker's main thread: a task's
 * client (`getClient()`) on a pool thread reaches the scheduler and the
 * workers as the main thread would, whatever the transport (an `inproc://`
 * cluster lives in the main thread's realm; TLS credentials are the main
 * thread's). The thread asks on its executor's channel (a `dial` message); the
 * main thread connects and pumps messages between the real comm and a
 * `BroadcastChannel` of that connection alone, which only the two ends open.
 * Messages cross it encoded as on TCP (`wireCodec.ts`), so a thread's client
 * sees what a TCP client would. The scheduler's receive limit, which the
 * client learns when it registers (`limitSendsTo`), is applied on the thread,
 * where the message is encoded anyway: a send over it rejects there, the
 * connection staying up. Checked on the main thread instead, it could only
 * abort the connection, as a send resolves once posted and nothing answers it.
 */

import { BroadcastChannel, threadId } from "node:worker_threads";
import { asError } from "../util/asError.ts";
import type { Comm } from "./comm.ts";
import { CommBase } from "./commBase.ts";
import { CommAbortedError, CommClosedError, ConnectError } from "./errors.ts";
import { forEachMessage } from "./forEachMessage.ts";
import { messageLength, messageSegments } from "./messageLayout.ts";
import { overPeerLimit, type PeerLimit, peerLimit } from "./peerLimit.ts";
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
}

/** What crosses a connection's channel, both ways. */
type BridgeFrame =
  /**
   * The main thread connected (to the thread). `limitsSizes`: its connection
   * has `limitSendsTo` (TCP), so the thread applies a limit given to its own.
   */
  | { readonly k: "open"; readonly limitsSizes: boolean }
  /** One message, encoded. */
  | {
      readonly k: "msg";
      readonly payload: Uint8Array;
      readonly buffers: readonly OutOfBandBuffer[];
    }
  /** The other end closed: orderly (`error` null) or not. */
  | { readonly k: "closed"; readonly error: string | null };

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

let nextId = 0;

/** The thread's end of a bridged connection. */
class BridgeComm extends CommBase {
  readonly localAddress: string;
  /** The peer's receive limit given to {@link limitSendsTo}, which sends are checked against. */
  private peerLimit: PeerLimit | null = null;
  /**
   * As TCP's (see `Comm.limitSendsTo`), applied here; only where the main
   * thread's connection has it (an in-process one takes any size). The main
   * thread's connection checks its own `maxMessageBytes` still.
   */
  readonly limitSendsTo?: (maxMessageBytes: number, whose: string) => void;

  constructor(
    readonly peerAddress: string,
    id: string,
    private readonly channel: BroadcastChannel,
    limitsSizes: boolean,
  ) {
    super();
    this.localAddress = `bridge://${id}`;
    if (limitsSizes) this.limitSendsTo = (n, whose) => (this.peerLimit = peerLimit(n, whose));
    channel.onmessage = (ev: unknown) => this.onFrame((ev as { data?: unknown }).data);
    void this.closed.then(() => channel.close());
  }

  private onFrame(frame: unknown): void {
    if (!isFrame(frame) || this.isClosed) return;
    if (frame.k === "msg") {
      const msg = decodedOr(frame, (err) => this.abort(err));
      if (msg !== UNDECODABLE) this.deliver(msg);
    } else if (frame.k === "closed") {
      this.finish(frame.error === null ? null : new CommClosedError(frame.error));
    }
  }

  send(msg: unknown): Promise<void> {
    if (this.isClosed) return Promise.reject(this.closedError());
    try {
      const message = encodeMessage(msg);
      if (this.peerLimit !== null) {
        // Its length on TCP, which the peer's limit counts.
        const over = overPeerLimit(messageLength(messageSegments(message)), this.peerLimit);
        if (over !== null) throw over;
      }
      post(this.channel, frameOf(message));
    } catch (err) {
      // A SerializationError for what cannot be encoded, a MessageTooLargeError
      // for what the peer would not take: the comm stays open.
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
 * On a pool thread: connect to `address` through the main thread of the
 * executor whose channel is `executorChannel` (`ask` posts the dial there).
 * Rejects with a `ConnectError` if the main thread cannot connect, or does not
 * answer within `timeoutMs`.
 */
export function dialThroughBridge(
  executorChannel: string,
  ask: (dial: DialMessage) => void,
  address: string,
  timeoutMs: number,
): Promise<Comm> {
  const id = `${threadId}-${++nextId}`;
  const channel = new BroadcastChannel(channelOf(executorChannel, id));
  return new Promise<Comm>((resolve, reject) => {
    const timer = setTimeout(() => {
      channel.close();
      reject(
        new ConnectError(
          `timed out connecting to ${address} through the worker's main thread`,
          address,
        ),
      );
    }, timeoutMs);
    channel.onmessage = (ev: unknown) => {
      const frame = (ev as { data?: unknown }).data;
      if (!isFrame(frame)) return;
      clearTimeout(timer);
      if (frame.k === "open") {
        resolve(new BridgeComm(address, id, channel, frame.limitsSizes === true));
      } else {
        channel.close();
        const why = frame.k === "closed" ? frame.error : "unexpected answer";
        reject(new ConnectError(`cannot connect to ${address}: ${why}`, address));
      }
    };
    ask({ t: "dial", id, thread: threadId, address });
  });
}

/**
 * On the main thread: answer a thread's {@link DialMessage} by connecting
 * with `dial` and pumping messages until either end closes. Resolves once the
 * bridged connection is over; `signal` ends it at once (the thread gone, or
 * the executor closing: a thread that ends cannot say so itself).
 */
export async function serveBridge(
  executorChannel: string,
  msg: DialMessage,
  dial: (address: string) => Promise<Comm>,
  signal: AbortSignal,
): Promise<void> {
  const channel = new BroadcastChannel(channelOf(executorChannel, msg.id));
  channel.unref();
  let comm: Comm;
  try {
    comm = await dial(msg.address);
  } catch (err) {
    post(channel, { k: "closed", error: asError(err).message });
    channel.close();
    return;
  }
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
  post(channel, { k: "open", limitsSizes: comm.limitSendsTo !== undefined });
  let error: string | null = null;
  try {
    await forEachMessage(comm, (m) => {
      try {
        post(channel, encoded(m));
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
  const { t, id, thread, address } = m as Record<string, unknown>;
  return (
    t === "dial" &&
    typeof id === "string" &&
    typeof thread === "number" &&
    typeof address === "string"
  );
}
