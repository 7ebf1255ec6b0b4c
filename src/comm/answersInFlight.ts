/**
 * The answers an rpc server (`serveRpc`: a worker's) is sending on one
 * connection and the transport has not taken yet. Past
 * {@link MAX_RPC_ANSWERS_IN_FLIGHT} the server reads no further request of
 * that connection until some are taken: a peer sending thousands of requests
 * without reading the answers made the server hold every answer in the
 * socket's buffer, without bound. Handlers still running do not count (an
 * actor's method waiting on another call is not held back). Dask sets no such
 * bound.
 */

import { RoomSignal } from "../util/roomSignal.ts";

/** Answers being sent on one connection, at most, before its requests wait. */
export const MAX_RPC_ANSWERS_IN_FLIGHT = 64;

/** One connection's answers in flight. */
export class AnswersInFlight {
  private count = 0;
  private closed = false;
  private readonly room = new RoomSignal();

  constructor(readonly limit: number = MAX_RPC_ANSWERS_IN_FLIGHT) {}

  /** True when the next request is to wait ({@link whenRoom}). */
  get full(): boolean {
    return this.count >= this.limit && !this.closed;
  }

  /** An answer is handed to the transport. */
  sending(): void {
    this.count++;
  }

  /** An answer was taken by the transport, or could not be sent. */
  sent(): void {
    this.count--;
    if (this.room.waiting && !this.full) this.room.open();
  }

  /** Resolves once the next request may be read (or the connection ended). */
  whenRoom(): Promise<void> {
    return this.full ? this.room.wait() : Promise.resolve();
  }

  /** The connection ended: nothing waits any more. */
  close(): void {
    this.closed = true;
    this.room.open();
  }
}
