/** One rpc connection per peer, opened on first use and reused. */

import { type CommOptions, commOptionsOf } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { CommClosedError } from "../comm/errors.ts";
import type { CommLogger } from "../comm/rpc.ts";
import { type RpcClient, rpc } from "../comm/rpc.ts";
import { raceSignal } from "./raceSignal.ts";

/** Options of {@link PeerPool}. */
export interface PeerPoolOptions extends CommOptions {
  /** How long a connection to a peer may take, in ms. */
  connectTimeoutMs: number;
  /** Where the rpc clients log a peer's malformed answers and broken connections. */
  logger?: CommLogger;
}

/** Rpc clients to peers, by address. A closed connection is replaced on next use. */
export class PeerPool {
  private readonly clients = new Map<string, Promise<RpcClient>>();
  private closed = false;

  constructor(private readonly options: PeerPoolOptions) {}

  /** Open connections (and connection attempts). */
  get size(): number {
    return this.clients.size;
  }

  /** An rpc client to `address`; connects if there is none open. */
  async get(address: string, signal?: AbortSignal): Promise<RpcClient> {
    if (this.closed) throw new Error("peer pool is closed");
    const existing = this.clients.get(address);
    if (existing !== undefined) {
      const client = await raceSignal(existing, signal).catch(() => null);
      signal?.throwIfAborted();
      if (client !== null && !client.comm.isClosed) return client;
      if (this.clients.get(address) === existing) this.clients.delete(address);
    }
    const p = connect(address, {
      timeoutMs: this.options.connectTimeoutMs,
      ...commOptionsOf(this.options),
    }).then((comm) => {
      const client = rpc(comm, this.options.logger);
      void comm.closed.then(() => {
        if (this.clients.get(address) === p) this.clients.delete(address);
      });
      if (this.closed) comm.abort();
      return client;
    });
    this.clients.set(address, p);
    p.catch(() => {
      if (this.clients.get(address) === p) this.clients.delete(address);
    });
    return raceSignal(p, signal);
  }

  /**
   * Close the connection to `address`, if any: calls waiting on it reject with a
   * `CommClosedError` (a network failure) saying `reason`.
   */
  remove(address: string, reason?: string): void {
    const p = this.clients.get(address);
    if (p === undefined) return;
    this.clients.delete(address);
    const error = reason === undefined ? undefined : new CommClosedError(reason);
    p.then((c) => c.comm.abort(error)).catch(() => {});
  }

  /** Close every connection. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map((p) => p.then((c) => c.comm.abort())));
  }
}
