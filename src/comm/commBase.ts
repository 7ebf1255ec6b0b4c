/** The parts of a {@link Comm} every transport shares: receiving, iteration and the close state. */

import type { Comm, CommCloseInfo } from "./comm.ts";
import { CommClosedError } from "./errors.ts";
import { MessageQueue } from "./messageQueue.ts";
import type { PeerLimit } from "./peerLimit.ts";

/**
 * Base of the transports: subclasses call {@link deliver} for every message
 * that arrives and {@link finish} once the connection is gone.
 */
export abstract class CommBase implements Comm {
  abstract readonly localAddress: string;
  abstract readonly peerAddress: string;
  private readonly queue = new MessageQueue();
  private closeInfo: CommCloseInfo | null = null;
  private resolveClosed!: (info: CommCloseInfo) => void;
  readonly closed: Promise<CommCloseInfo> = new Promise((resolve) => {
    this.resolveClosed = resolve;
  });

  get isClosed(): boolean {
    return this.closeInfo !== null;
  }

  abstract send(msg: unknown, limit?: PeerLimit): Promise<void>;
  abstract close(): Promise<void>;
  abstract abort(error?: Error): void;

  /** A message arrived. */
  protected deliver(msg: unknown): void {
    if (this.closeInfo === null) this.queue.push(msg);
  }

  /**
   * The comm is closed, orderly (`error` null) or not. Messages that arrived
   * before stay readable unless `drop`. Only the first call counts.
   */
  protected finish(error: Error | null, drop = false): void {
    if (this.closeInfo !== null) return;
    const info: CommCloseInfo = { error };
    this.closeInfo = info;
    this.queue.end(error, drop);
    this.resolveClosed(info);
  }

  /** The error a send on a closed comm rejects with. */
  protected closedError(): CommClosedError {
    const err = this.closeInfo?.error ?? null;
    return new CommClosedError(
      err === null
        ? `comm to ${this.peerAddress} is closed`
        : `comm to ${this.peerAddress} is closed: ${err.message}`,
      err === null ? undefined : { cause: err },
    );
  }

  recv(): Promise<unknown> {
    return this.queue.shift();
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return {
      next: async (): Promise<IteratorResult<unknown>> => {
        try {
          return { value: await this.recv(), done: false };
        } catch (err) {
          const closeError = this.closeInfo?.error ?? null;
          if (err instanceof CommClosedError && closeError === null) {
            return { value: undefined, done: true };
          }
          throw closeError ?? err;
        }
      },
      return: async (): Promise<IteratorResult<unknown>> => ({ value: undefined, done: true }),
    };
  }
}
