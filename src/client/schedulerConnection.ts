/**
 * A client's connection to the scheduler: the `register-client` handshake,
 * then a batched stream both ways. Messages from the scheduler go to
 * `onMessage`, except the replies to {@link request}s, which settle them.
 */

import { BatchedSend } from "../comm/batchedSend.ts";
import { type Comm, type CommOptions, commOptionsOf } from "../comm/comm.ts";
import { connectWaiting, type WaitedAddress, type WaitedFailure } from "../comm/connectWaiting.ts";
import { CommClosedError } from "../comm/errors.ts";
import { forEachMessage } from "../comm/forEachMessage.ts";
import { LoopHold } from "../comm/loopHold.ts";
import { plainToTlsHint } from "../comm/plainToTlsHint.ts";
import {
  type ClientRequestOp,
  limitSendsToScheduler,
  type RegisterClientMsg,
  type RegisterReplyMsg,
  type ReplyMsg,
  receiveLimitOf,
  type ServerToClientMessage,
} from "../protocol/messagesSession.ts";
import { protocolMismatch, wireVersion } from "../protocol/version.ts";
import { asError } from "../util/asError.ts";
import { raceSignal } from "../worker/raceSignal.ts";
import { ClientClosedError, SchedulerReplyError } from "./errors.ts";

/** Options of {@link SchedulerConnection.open}. */
export interface SchedulerConnectionOptions extends CommOptions {
  /**
   * Connect and handshake within this many ms; a scheduler that cannot be
   * reached yet (refusing the connection: not listening yet; its name not
   * resolving yet, …) is asked again until then.
   */
  timeoutMs: number;
  /** Called once if the first try fails in a way that may mend, with why: the caller says it waits. */
  onFirstFailure?: (failure: WaitedFailure) => void;
  /**
   * Called every 10 s while a try goes on without an answer (a TLS handshake never
   * made, packets dropped), which fails only at `timeoutMs`: the caller says it waits.
   */
  onTryPending?: (pending: { readonly address: string; readonly pendingMs: number }) => void;
  /**
   * Batching interval of the stream to the scheduler, in ms. Default: 0 to an
   * `inproc://` scheduler (in this process), 2 otherwise.
   */
  batchedSendIntervalMs?: number;
  /** Aborted: stop connecting at once (the try in flight, the handshake), rejecting with its reason. */
  signal?: AbortSignal;
  /**
   * The address of the worker whose tasks use this client, told the scheduler
   * as it registers (see `RegisterClientMsg.worker`). Default: none.
   */
  worker?: string;
}

interface PendingRequest {
  readonly op: ClientRequestOp;
  /** The request's number among the messages sent (see `SchedulerConnection.onAnswered`). */
  readonly sent: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

function timeout<T>(p: Promise<T>, ms: number, what: string, why = ""): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms${why}`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** The stream between a client and its scheduler. */
export class SchedulerConnection {
  /** Called with every scheduler message but replies. */
  onMessage: (msg: ServerToClientMessage) => void = () => {};
  /**
   * Called once when the connection ends (`error` null for an orderly close by
   * this side); the error it returns, if any, is what requests still
   * unanswered fail with, so that they say what the owner closed with.
   */
  onClose: (error: Error | null) => Error | undefined = () => undefined;
  /**
   * Called with a message that could not be sent (it cannot be encoded, or is
   * larger than `maxMessageBytes`) and why; the connection goes on. Requests
   * that fail so are rejected instead.
   */
  onSendFailed: (msg: unknown, error: Error) => void = () => {};
  /**
   * Called with the number {@link send} gave a request (it numbers requests
   * alike) once the scheduler answered it: the scheduler takes a client's
   * messages in order and answers a request once it handled those before it,
   * so every message numbered lower was handled (taken, or refused with a
   * `message-refused` that came first).
   */
  onAnswered: (sent: number) => void = () => {};
  private readonly stream: BatchedSend;
  /** Messages sent so far, requests included. */
  private sentCount = 0;
  private readonly pending = new Map<number, PendingRequest>();
  private nextRequestId = 1;
  private closing = false;
  private markEnded: () => void = () => {};
  /** Resolves once the connection has ended, closed by either side. */
  readonly ended: Promise<void> = new Promise((resolve) => {
    this.markEnded = resolve;
  });
  /** What requests in flight fail with when `close` ended the connection, not the scheduler. */
  private closedBy: ClientClosedError | null = null;
  /** What keeps the process alive: over TCP, only what waits on the scheduler (see `LoopHold`). */
  private readonly loop: LoopHold;

  private constructor(
    readonly comm: Comm,
    intervalMs: number,
    /** The scheduler's address: the one that accepted, of those dialled. */
    readonly address: string,
    /**
     * The scheduler's `leaseTimeoutMs`, after which a lease this client does not
     * refresh expires; null: never (or a scheduler that did not say).
     */
    readonly leaseTimeoutMs: number | null = null,
  ) {
    this.loop = new LoopHold(comm);
    this.stream = new BatchedSend(comm, {
      intervalMs,
      onMessageError: (err, msg) => this.sendFailed(msg, asError(err)),
      // The stream is gone: end the connection, so that everything waiting on
      // the scheduler fails instead of waiting forever.
      onError: (err) => comm.abort(asError(err)),
    });
  }

  private sendFailed(msg: unknown, error: Error): void {
    const requestId = (msg as { requestId?: unknown } | null)?.requestId;
    const pending = typeof requestId === "number" ? this.pending.get(requestId) : undefined;
    if (pending !== undefined) {
      this.pending.delete(requestId as number);
      pending.reject(error);
      return;
    }
    this.onSendFailed(msg, error);
  }

  /**
   * Connect to `where` as client `clientId`: an address, or a function giving
   * the one to dial before each try (see `WaitedAddress`). A connection refused (or
   * failing otherwise in a way that may mend) is tried again until
   * `timeoutMs`; rejects if it still fails then, or fails otherwise (TLS).
   */
  static async open(
    where: WaitedAddress,
    clientId: string,
    o: SchedulerConnectionOptions,
  ): Promise<SchedulerConnection> {
    let address = typeof where === "string" ? where : "";
    const dial =
      typeof where === "string"
        ? where
        : async () => {
            address = await where();
            return address;
          };
    // A scheduler started together with its clients may not listen yet: wait for it, as Dask's.
    const comm = await connectWaiting(dial, {
      ...commOptionsOf(o),
      timeoutMs: o.timeoutMs,
      onFirstFailure: o.onFirstFailure,
      onTryPending: o.onTryPending,
      ...(o.signal !== undefined ? { signal: o.signal } : {}),
    });
    let leaseTimeoutMs: unknown = null;
    try {
      const hello: RegisterClientMsg = {
        op: "register-client",
        clientId,
        ...(o.worker !== undefined ? { worker: o.worker } : {}),
        // So that the scheduler sends no more than this connection takes (see ReceiveLimit).
        ...receiveLimitOf(comm),
        ...wireVersion(),
      };
      await comm.send(hello);
      const answer = comm.recv().catch((err: unknown) => {
        if (!(err instanceof CommClosedError)) throw err;
        throw new Error(
          `${address} closed the connection instead of answering register-client (${err.message}): is it a scheduler's address (not a worker's)? Its log says why${
            plainToTlsHint(address) === "" ? "" : `; or is it ${plainToTlsHint(address)}?`
          }`,
          { cause: err },
        );
      });
      const reply = (await timeout(
        raceSignal(answer, o.signal),
        o.timeoutMs,
        `registering with ${address}`,
        // The connection was accepted: what is there says nothing, and a user
        // looking at a timeout would first suspect the network.
        ": it accepted the connection but did not answer register-client (a scheduler frozen or stalled: stopped, a paused VM, a long GC; or not a weft scheduler)",
      )) as Partial<RegisterReplyMsg> | null;
      if (reply?.status !== "OK") {
        const why = typeof reply?.message === "string" ? reply.message : JSON.stringify(reply);
        throw new Error(`the scheduler at ${address} refused the client: ${why}`);
      }
      // A scheduler older than the version check accepts any client: refuse it here.
      const mismatch = protocolMismatch(`the scheduler at ${address}`, "this client", reply);
      if (mismatch !== null) throw new Error(mismatch);
      // A message over the scheduler's limit then fails alone, and the connection goes on.
      limitSendsToScheduler(comm, reply);
      leaseTimeoutMs = reply.leaseTimeoutMs;
    } catch (err) {
      comm.abort();
      throw err;
    }
    const conn = new SchedulerConnection(
      comm,
      o.batchedSendIntervalMs ?? (address.startsWith("inproc://") ? 0 : 2),
      address,
      typeof leaseTimeoutMs === "number" && leaseTimeoutMs > 0 ? leaseTimeoutMs : null,
    );
    void conn.readLoop();
    return conn;
  }

  /** True once closed by either side. */
  get isClosed(): boolean {
    return this.closing || this.stream.isClosed;
  }

  /**
   * Queue a message for the scheduler: its number among the messages sent
   * (see {@link onAnswered}). Throws a `ClientClosedError` once closed.
   */
  send(msg: unknown): number {
    if (this.isClosed) throw new ClientClosedError("the connection to the scheduler is closed");
    this.stream.send(msg);
    return ++this.sentCount;
  }

  /**
   * Keep the process alive until the returned function is called: something
   * awaited depends on what the scheduler will send (a future's result, a
   * `Sub.get`). Requests hold it by themselves until answered.
   */
  holdLoop(): () => void {
    return this.loop.hold();
  }

  /** Whether anything holds the process alive now (see {@link holdLoop}). */
  get holdsLoop(): boolean {
    return this.loop.held;
  }

  /** Send the queued messages now; resolves once they are handed to the comm. */
  flush(): Promise<void> {
    return this.stream.flush();
  }

  /**
   * Ask the server (not the state machine) something; resolves with its
   * `result`. Rejects with a `SchedulerReplyError` if it answers with an
   * error, with a `ClientClosedError` if the connection ends first, and with
   * the transport's error if the request cannot be sent.
   */
  request(op: ClientRequestOp, fields: Record<string, unknown> = {}): Promise<unknown> {
    if (this.isClosed) {
      return Promise.reject(new ClientClosedError("the connection to the scheduler is closed"));
    }
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      this.stream.send({ op, requestId, ...fields });
      const release = this.loop.hold();
      this.pending.set(requestId, {
        op,
        sent: ++this.sentCount,
        resolve: (v) => {
          release();
          resolve(v);
        },
        reject: (e) => {
          release();
          reject(e);
        },
      });
    });
  }

  private async readLoop(): Promise<void> {
    let error: Error | null = null;
    try {
      await forEachMessage(this.comm, (frame) => {
        const msgs = (Array.isArray(frame) ? frame : [frame]) as ServerToClientMessage[];
        for (const msg of msgs) {
          if (msg?.op === "reply") this.settle(msg);
          else this.onMessage(msg);
        }
      });
    } catch (err) {
      error = asError(err);
    }
    if (!this.closing && error === null) error = new Error("the scheduler closed the connection");
    this.closing = true;
    this.stream.abort();
    const told = this.onClose(error);
    // A wait the user's own close cut short says so, not that the scheduler went away;
    // one the scheduler's going cut short says what the owner closed with (a request in
    // flight then, and one made just after, fail alike).
    const why =
      this.closedBy ??
      told ??
      new ClientClosedError(
        `the connection to the scheduler ended${error === null ? "" : `: ${error.message}`}`,
      );
    for (const p of this.pending.values()) p.reject(why);
    this.pending.clear();
    this.markEnded();
  }

  private settle(msg: ReplyMsg): void {
    const p = this.pending.get(msg.requestId);
    if (p === undefined) return;
    this.pending.delete(msg.requestId);
    this.onAnswered(p.sent);
    if (typeof msg.error === "string") p.reject(new SchedulerReplyError(p.op, msg.error));
    else p.resolve(msg.result);
  }

  /**
   * Send what is queued, then close; requests still unanswered reject with `why`
   * when given (the client's own close), else as a connection that ended.
   */
  async close(why?: ClientClosedError): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.closedBy = why ?? null;
    await this.stream.close();
  }
}
