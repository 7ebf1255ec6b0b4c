/** One rpc connection per peer, opened on first use and reused. */

import { type Comm, type CommOptions, commOptionsOf } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { CommClosedError } from "../comm/errors.ts";
import type { CommLogger } from "../comm/rpc.ts";
import { RemoteError, type RpcClient, rpc } from "../comm/rpc.ts";
import { maxMessageBytesOf } from "./identity.ts";
import { raceSignal } from "./raceSignal.ts";

/** Options of {@link PeerPool}. */
export interface PeerPoolOptions extends CommOptions {
  /** How long a connection to a peer may take, in ms. */
  connectTimeoutMs: number;
  /** Where the rpc clients log a peer's malformed answers and broken connections. */
  logger?: CommLogger;
  /**
   * The connections keep the process alive only while a call on them waits
   * (`RpcClient.keepAliveOnlyWhileAsked`): a client's, whose program must end
   * once it is done. Default false: a worker's, running anyway.
   */
  keepAliveOnlyWhileAsked?: boolean;
}

/** Rpc clients to peers, by address. A closed connection is replaced on next use. */
export class PeerPool {
  private readonly clients = new Map<string, Promise<RpcClient>>();
  /** What each peer said of its `maxMessageBytes` (see {@link limitOf}). */
  private readonly limits = new Map<string, number>();
  /**
   * Connections made whose peer has not answered `identity` yet, so that
   * {@link remove} and {@link closeAll} cut them too: a frozen peer accepts a
   * connection (its kernel does) and never answers.
   */
  private readonly learning = new Map<Promise<RpcClient>, Comm>();
  /**
   * Connections {@link remove} cut while still connecting, and why: the
   * connection is cut as soon as it is made (before its `identity`, which a
   * frozen peer would never answer).
   */
  private readonly cut = new WeakMap<Promise<RpcClient>, CommClosedError>();
  /**
   * What aborts each connection's connect try: {@link remove} ends a try still
   * in flight (a TLS handshake a peer never makes, packets dropped), which else
   * went on to its timeout, holding `closeAll` (a worker's close) and the process.
   */
  private readonly dials = new WeakMap<Promise<RpcClient>, AbortController>();
  private closed = false;

  constructor(private readonly options: PeerPoolOptions) {}

  /** Open connections (and connection attempts). */
  get size(): number {
    return this.clients.size;
  }

  /** The addresses of the peers connected (or being connected) to. */
  addresses(): string[] {
    return [...this.clients.keys()];
  }

  /** Whether `address` is connected (or being connected) to. */
  has(address: string): boolean {
    return this.clients.has(address);
  }

  /** An rpc client to `address`; connects if there is none open. */
  async get(address: string, signal?: AbortSignal): Promise<RpcClient> {
    if (this.closed) throw new Error("peer pool is closed");
    // Wait on the connection in the pool, if any. When it fails, another caller
    // waiting on it may have replaced it already: wait on that one in turn
    // rather than connect too, for a second connection would replace the first
    // in the pool, and neither closeAll nor remove would then close it.
    for (;;) {
      const existing = this.clients.get(address);
      if (existing === undefined) break;
      const client = await raceSignal(existing, signal).catch(() => null);
      signal?.throwIfAborted();
      if (client !== null && !client.comm.isClosed) return client;
      if (this.clients.get(address) === existing) {
        this.clients.delete(address);
        break;
      }
    }
    const dial = new AbortController();
    const p = connect(address, {
      timeoutMs: this.options.connectTimeoutMs,
      ...commOptionsOf(this.options),
      signal: dial.signal,
    }).then(async (comm) => {
      const cut = this.cut.get(p);
      if (cut !== undefined) {
        comm.abort(cut);
        throw cut;
      }
      const client = rpc(comm, this.options.logger);
      if (this.options.keepAliveOnlyWhileAsked === true) client.keepAliveOnlyWhileAsked();
      void comm.closed.then(() => {
        if (this.clients.get(address) !== p) return;
        this.clients.delete(address);
        // Learnt again on the next connection: kept, one per peer that ever was.
        this.limits.delete(address);
      });
      this.learning.set(p, comm);
      try {
        await this.learnLimit(client, address);
      } finally {
        this.learning.delete(p);
      }
      return client;
    });
    this.dials.set(p, dial);
    this.clients.set(address, p);
    p.catch(() => {
      if (this.clients.get(address) === p) this.clients.delete(address);
    });
    return raceSignal(p, signal);
  }

  /**
   * The largest message the peer at `address` reads, as it said on the open
   * connection to it (its `identity`); undefined if it did not say, or there is
   * no open connection.
   */
  limitOf(address: string): number | undefined {
    return this.limits.get(address);
  }

  /**
   * Ask the peer its `identity` and send it no message larger than it reads
   * (`Comm.limitSendsTo`): such a request then fails here, a data error naming
   * the sizes, rather than the peer closing the connection on it, which looks
   * like the network failing and is tried again without end. A peer that
   * answers `identity` with an error (another program) is sent anything. No
   * timeout, as `get_data` has none: a worker running a long synchronous task
   * on its main thread answers late, and is no less there (a caller's signal
   * stops waiting). A connection lost meanwhile is a network failure, and so
   * is one {@link remove} cuts: a peer that left the cluster (frozen, it would
   * never answer).
   */
  private async learnLimit(client: RpcClient, address: string): Promise<void> {
    let answer: unknown;
    try {
      answer = await client.call("identity");
    } catch (err) {
      if (err instanceof RemoteError) {
        this.limits.delete(address);
        return;
      }
      const why = err instanceof Error ? err.message : String(err);
      const failure = new CommClosedError(`${address} did not answer identity: ${why}`, {
        cause: err,
      });
      client.comm.abort(failure);
      throw failure;
    }
    let limit: number | undefined;
    try {
      limit = maxMessageBytesOf(answer);
    } catch (err) {
      client.comm.abort(err as Error);
      throw err;
    }
    if (limit === undefined) {
      this.limits.delete(address);
      return;
    }
    this.limits.set(address, limit);
    client.comm.limitSendsTo?.(limit, `the maxMessageBytes of worker ${address}`);
  }

  /**
   * Close the connection to `address`, if any: calls waiting on it reject with a
   * `CommClosedError` (a network failure) saying `reason`.
   */
  remove(address: string, reason?: string): void {
    this.limits.delete(address);
    const p = this.clients.get(address);
    if (p === undefined) return;
    this.clients.delete(address);
    const error = reason === undefined ? undefined : new CommClosedError(reason);
    const cut = error ?? new CommClosedError(`the connection to ${address} was closed`);
    // Still connecting, or waiting for its identity: cut now, or a silent peer
    // holds it for good.
    this.cut.set(p, cut);
    this.dials.get(p)?.abort(cut);
    this.learning.get(p)?.abort(error);
    p.then((c) => c.comm.abort(error)).catch(() => {});
  }

  /** Close every connection, as {@link remove} closes one (those still being made too). */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.clients.values()];
    for (const address of [...this.clients.keys()]) this.remove(address);
    await Promise.allSettled(all);
  }
}
