/**
 * Request/response over a comm, with a per-request id so that several calls
 * can share one connection and answers may come back in any order.
 *
 * Wire form: a request is `{op, id, args}`; the answer is `{id, result}` or
 * `{id, error: {name, message, stack}}`.
 */

import { asError } from "../util/asError.ts";
import { warnCallbackFailed } from "../util/callbackWarning.ts";
import { containLogger } from "../util/containedLogger.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { readableErrorFields } from "../util/readSafely.ts";
import { showValue } from "../util/showValue.ts";
import { timeoutProblem, timeoutUnlessInfinite } from "../util/timers.ts";
import { AnswersInFlight } from "./answersInFlight.ts";
import { logBrokenConnection } from "./brokenConnection.ts";
import type { Comm } from "./comm.ts";
import { CommAbortedError, CommClosedError, isNetworkError, SerializationError } from "./errors.ts";
import { forEachMessage } from "./forEachMessage.ts";
import { LoopHold } from "./loopHold.ts";
import { type PeerLimit, peerLimit } from "./peerLimit.ts";
import { limitReplyToRequester } from "./replyLimit.ts";
import { UnreadableValueError } from "./unreadableValue.ts";

/** The logging a comm helper needs; a pino logger is one. */
export interface CommLogger {
  /** Logs `obj` and `msg` at warn level (a malformed answer, a broken comm). */
  warn(obj: object, msg?: string): void;
  /** Logs `obj` and `msg` at error level. */
  error(obj: object, msg?: string): void;
  /** Logs `obj` and `msg` at debug level, if the logger has one. */
  debug?(obj: object, msg?: string): void;
}

/** An error thrown by the remote handler, carried back. */
export class RemoteError extends Error {
  override name = "RemoteError";
  constructor(
    message: string,
    /** The remote error's name, e.g. `"TypeError"`. */
    readonly remoteName: string,
    /** The remote error's stack, if it sent one. */
    readonly remoteStack: string,
  ) {
    super(message);
  }
}

/** A remote error's message without the rpc's `<op> on <address> failed: <name>: ` before it. */
export function remoteMessage(err: RemoteError): string {
  const prefix = `: ${err.remoteName}: `;
  const at = err.message.indexOf(prefix);
  return at < 0 ? err.message : err.message.slice(at + prefix.length);
}

/** Options of one {@link RpcClient.call}. */
export interface RpcCallOptions {
  /** Stop waiting (the answer, if it comes, is ignored). */
  signal?: AbortSignal;
  /** Give up after this many milliseconds. */
  timeoutMs?: number;
}

interface Pending {
  op: string;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The calling side. Owns the comm's receive side: nothing else may read from it. */
export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closeError: Error | null = null;
  private readonly logger: CommLogger | undefined;
  /** Set by {@link keepAliveOnlyWhileAsked}. */
  private loopHold: LoopHold | null = null;

  constructor(
    /** The connection requests go over. */
    readonly comm: Comm,
    logger?: CommLogger,
  ) {
    // A throw from a log line ended the read loop: no call on the comm was answered again.
    this.logger = logger === undefined ? undefined : containLogger(logger);
    // An answer whose value cannot be read fails its call alone (see onAnswer).
    comm.readUnreadable?.();
    void this.readLoop();
  }

  /**
   * From now on the connection keeps the process alive only while a call
   * waits for its answer (a client's connections to workers: a program that
   * is done must end, see `LoopHold`).
   */
  keepAliveOnlyWhileAsked(): void {
    this.loopHold ??= new LoopHold(this.comm);
  }

  /** Calls waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Call `op` with `args` and wait for the answer. Rejects with a
   * `CommClosedError` if the comm closes first (its `cause` says why), with a
   * {@link RemoteError} if the handler threw, or with the signal's reason.
   */
  call(
    op: string,
    args: Record<string, unknown> = {},
    options: RpcCallOptions = {},
  ): Promise<unknown> {
    if (this.comm.isClosed) return Promise.reject(this.commClosed());
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const badTimeout = timeoutMs === undefined ? null : timeoutProblem(timeoutMs);
    if (badTimeout !== null) return Promise.reject(new RangeError(`rpc ${op}: ${badTimeout}`));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const release = this.loopHold?.hold();
      const onAbort = () => settle(() => reject(signal?.reason));
      const settle = (fn: () => void) => {
        if (!this.pending.delete(id)) return;
        release?.();
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      this.pending.set(id, {
        op,
        resolve: (v) => settle(() => resolve(v)),
        reject: (e) => settle(() => reject(e)),
      });
      if (timeoutMs !== undefined) {
        timer = timeoutUnlessInfinite(
          () =>
            settle(() =>
              reject(
                new Error(`rpc ${op} to ${this.comm.peerAddress} timed out after ${timeoutMs} ms`),
              ),
            ),
          timeoutMs,
        );
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.comm.send({ op, id, args }).catch((err: unknown) => this.pending.get(id)?.reject(err));
    });
  }

  /** Close the comm; pending calls reject. */
  close(): Promise<void> {
    return this.comm.close();
  }

  private commClosed(): CommClosedError {
    const err = this.closeError;
    return new CommClosedError(
      err === null
        ? `comm to ${this.comm.peerAddress} closed`
        : `comm to ${this.comm.peerAddress} closed: ${err.message}`,
      err === null ? undefined : { cause: err },
    );
  }

  private async readLoop(): Promise<void> {
    try {
      await forEachMessage(this.comm, (msg) => this.onAnswer(msg));
    } catch (err) {
      this.closeError = asError(err);
    }
    const closeError = this.commClosed();
    for (const p of [...this.pending.values()]) p.reject(closeError);
  }

  private onAnswer(msg: unknown): void {
    if (msg instanceof UnreadableValueError) {
      this.unreadableAnswer(msg);
      return;
    }
    if (!isRecord(msg) || typeof msg.id !== "number") {
      this.logger?.warn({ peer: this.comm.peerAddress }, "rpc: ignoring a malformed answer");
      return;
    }
    const p = this.pending.get(msg.id);
    if (p === undefined) return; // abandoned (aborted or timed out)
    if (isRecord(msg.error)) {
      const name = typeof msg.error.name === "string" ? msg.error.name : "Error";
      const message = typeof msg.error.message === "string" ? msg.error.message : "unknown error";
      const stack = typeof msg.error.stack === "string" ? msg.error.stack : "";
      p.reject(
        new RemoteError(
          `${p.op} on ${this.comm.peerAddress} failed: ${name}: ${message}`,
          name,
          stack,
        ),
      );
    } else {
      p.resolve(msg.result);
    }
  }

  /**
   * An answer arrived whose value cannot be read (a peer's result that does not
   * deserialize here): its call fails with a `SerializationError` saying so, not
   * a network error, and the connection serves the others. One that names no
   * call cannot be told apart from theirs: the comm closes with it, as before.
   */
  private unreadableAnswer(err: UnreadableValueError): void {
    if (typeof err.id !== "number") {
      this.comm.abort(err);
      return;
    }
    const p = this.pending.get(err.id);
    p?.reject(
      new SerializationError(
        `${p.op} on ${this.comm.peerAddress}: a value in the answer cannot be read: ${unreadableWhy(err)}`,
        { cause: err },
      ),
    );
  }
}

/** What a value that cannot be read says of itself (`malformed frame` left out). */
function unreadableWhy(err: UnreadableValueError): string {
  return err.cause instanceof Error ? err.cause.message : err.message;
}

/** Make an {@link RpcClient} on `comm`. */
export function rpc(comm: Comm, logger?: CommLogger): RpcClient {
  return new RpcClient(comm, logger);
}

/** What a handler is told about its request. */
export interface RpcContext {
  /** The comm the request came on. */
  readonly comm: Comm;
  /**
   * Call `cb` once the answer was handed to the transport (`ok`) or could not
   * be sent. What it throws (or the promise it returns rejects with) is logged
   * at error level by `serveRpc`'s logger, or without one is a process warning.
   */
  afterReply(cb: (ok: boolean) => void): void;
  /**
   * The requester takes an answer of at most `maxMessageBytes` (it said so in
   * its request; `whose` names that limit in the error): a larger answer is
   * not sent, and the requester gets an error answer with the
   * `MessageTooLargeError` instead (see `Comm.send`'s `limit`). A limit not
   * below the comm's own changes nothing; a RangeError for one that is not a
   * positive integer.
   */
  limitReplyTo?(maxMessageBytes: number, whose: string): void;
}

/** Handles one op: returns (or resolves to) the result; a throw becomes an error answer. */
export type RpcHandler = (args: Record<string, unknown>, ctx: RpcContext) => unknown;

/**
 * Answer the requests arriving on `comm` with `handlers`, concurrently, until
 * the comm closes. Malformed requests and unknown ops are answered with an
 * error (or dropped if they have no usable id) and logged; a message naming
 * an op without an id (another protocol's) closes the comm.
 */
export async function serveRpc(
  comm: Comm,
  handlers: Readonly<Record<string, RpcHandler>>,
  given?: CommLogger,
): Promise<void> {
  // Checked before any request: read per request, a null crashed the process (the
  // answering is not awaited) at the first message.
  if (typeof handlers !== "object" || handlers === null) {
    throw new TypeError(
      `serveRpc: handlers must be an object {op: handler}, got ${showValue(handlers)}`,
    );
  }
  // A throw from a log line rejected the answering, which nothing awaits: no answer, and
  // an unhandled rejection.
  const logger = given === undefined ? undefined : containLogger(given);
  // A request whose value cannot be read is answered with the error (see answer).
  comm.readUnreadable?.();
  const inFlight = new AnswersInFlight();
  void comm.closed.then(() => inFlight.close());
  try {
    await forEachMessage(comm, (msg) => {
      void answer(comm, msg, handlers, logger, inFlight);
      // The next request waits while too many answers wait for the peer to read them.
      return inFlight.full ? inFlight.whenRoom() : undefined;
    });
  } catch (err) {
    // Aborted on this side (a server shutting down): expected, not a broken comm.
    if (err instanceof CommAbortedError)
      logger?.debug?.({ peer: comm.peerAddress }, "rpc: comm aborted");
    else if (!isNetworkError(err))
      // What the peer sent could not be read (not weft's protocol, a broken frame, too large):
      // the peer's fault, said in one line.
      logger?.warn(
        { peer: comm.peerAddress, reason: (err as Error).message },
        "rpc: unreadable peer",
      );
    else if (logger !== undefined)
      logBrokenConnection(logger, "warn", { peer: comm.peerAddress }, err, "rpc: comm broke");
  }
}

async function answer(
  comm: Comm,
  msg: unknown,
  handlers: Readonly<Record<string, RpcHandler>>,
  logger: CommLogger | undefined,
  inFlight: AnswersInFlight,
): Promise<void> {
  if (msg instanceof UnreadableValueError) {
    await unreadableRequest(comm, msg, logger);
    return;
  }
  const id = isRecord(msg) && Number.isSafeInteger(msg.id) ? (msg.id as number) : null;
  const callbacks: ((ok: boolean) => void)[] = [];
  let replyLimit: PeerLimit | undefined;
  const reply = async (body: Record<string, unknown>): Promise<void> => {
    let ok = false;
    inFlight.sending();
    try {
      await comm.send({ id, ...body }, "error" in body ? undefined : replyLimit);
      ok = true;
    } catch (err) {
      if (!comm.isClosed && !("error" in body)) {
        logger?.warn({ peer: comm.peerAddress, err }, "rpc: cannot send the answer");
        try {
          await comm.send({ id, error: readableErrorFields(err) });
        } catch {
          // nothing more to do
        }
      }
    } finally {
      inFlight.sent();
    }
    // A throw here rejected the answering, which nothing awaits: the process ended.
    for (const cb of callbacks) callGuarded(() => cb(ok), callbackFailed);
  };
  const callbackFailed = (err: unknown) => {
    const what = "rpc: an afterReply callback failed";
    if (logger === undefined) warnCallbackFailed(what, err);
    else logger.error({ peer: comm.peerAddress, err }, what);
  };
  if (id === null && isRecord(msg) && typeof msg.op === "string") {
    // A message of another protocol, with no id to answer: the peer took this address
    // for another server's (a client or a worker given a worker's address for the
    // scheduler's). Closed, as Dask closes a comm asking for an op it has no handler
    // for, so that the peer learns at once instead of waiting for an answer.
    logger?.warn(
      { peer: comm.peerAddress, op: msg.op },
      "rpc: a message without an id (not a request to this server): closing the connection",
    );
    await comm.close();
    return;
  }
  if (!isRecord(msg) || typeof msg.op !== "string" || id === null) {
    logger?.warn({ peer: comm.peerAddress }, "rpc: malformed request");
    if (id !== null)
      await reply({ error: { name: "TypeError", message: "malformed request", stack: "" } });
    return;
  }
  const handler = Object.hasOwn(handlers, msg.op) ? handlers[msg.op] : undefined;
  if (handler === undefined) {
    logger?.warn({ peer: comm.peerAddress, op: msg.op }, "rpc: unknown op");
    await reply({
      error: { name: "Error", message: `unknown op ${JSON.stringify(msg.op)}`, stack: "" },
    });
    return;
  }
  const args = msg.args === undefined ? {} : msg.args;
  if (!isRecord(args)) {
    await reply({
      error: { name: "TypeError", message: `${msg.op}: args must be an object`, stack: "" },
    });
    return;
  }
  let result: unknown;
  try {
    const ctx: RpcContext = {
      comm,
      afterReply: (cb) => callbacks.push(cb),
      limitReplyTo: (maxMessageBytes, whose) => {
        replyLimit = peerLimit(maxMessageBytes, whose);
      },
    };
    // Whatever the op: a handler cannot forget it, and a bad limit is refused alike.
    limitReplyToRequester(msg.op, args, ctx);
    result = await handler(args, ctx);
  } catch (err) {
    await reply({ error: readableErrorFields(err) });
    return;
  }
  await reply({ result });
}

/**
 * A request arrived whose value cannot be read (a client's `update_data`
 * value that does not deserialize here): answered with a `SerializationError`
 * naming the op and the cause, the connection kept, so that the requester
 * learns why rather than taking this server for unreachable. One without an
 * id to answer closes the connection, as a frame that does not decode does.
 */
async function unreadableRequest(
  comm: Comm,
  err: UnreadableValueError,
  logger: CommLogger | undefined,
): Promise<void> {
  if (!Number.isSafeInteger(err.id)) {
    comm.abort(err);
    return;
  }
  const op = typeof err.op === "string" ? err.op : "request";
  const why = unreadableWhy(err);
  logger?.warn(
    { peer: comm.peerAddress, op, reason: why },
    "rpc: a value in a request cannot be read",
  );
  const message = `${op}: a value in the request cannot be read: ${why}`;
  try {
    await comm.send({ id: err.id, error: { name: "SerializationError", message, stack: "" } });
  } catch {
    // the requester is gone
  }
}
