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

  /** Whether {@link pauseReading} was called last rather than {@link resumeReading}. */
  private readingPaused = false;
  /** Set by {@link readToTheEnd}: reading is never stopped again. */
  private readsToTheEnd = false;

  /**
   * A message arrived, of `bytes` on the wire (a transport that can stop
   * reading says, see {@link maxUnreadBytes}).
   */
  protected deliver(msg: unknown, bytes = 0): void {
    if (this.closeInfo !== null) return;
    this.queue.push(msg, bytes);
    if (!this.readingPaused && !this.readsToTheEnd && this.queue.bytes > this.maxUnreadBytes) {
      this.readingPaused = true;
      this.pauseReading();
    }
  }

  /**
   * The bytes of messages arrived and not read past which the transport stops
   * reading the connection ({@link pauseReading}), until the reader has read
   * them down to half: else a reader that stops (a scheduler holding a
   * client's further requests until its answers are taken) kept whatever the
   * peer went on sending. Infinity: never.
   */
  protected get maxUnreadBytes(): number {
    return Number.POSITIVE_INFINITY;
  }

  /** Stop reading the connection (the peer's sends wait in the network's buffers, then in its own). */
  protected pauseReading(): void {}

  /** Read the connection again. */
  protected resumeReading(): void {}

  /**
   * The comm is closing: read on until the peer's end, whatever is unread,
   * so that the peer's close is seen (and what it sent before stays readable).
   */
  protected readToTheEnd(): void {
    this.readsToTheEnd = true;
    this.resumeIfPaused();
  }

  private resumeIfPaused(): void {
    if (!this.readingPaused) return;
    this.readingPaused = false;
    this.resumeReading();
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
    const next = this.queue.shift();
    if (this.readingPaused && this.queue.bytes <= this.maxUnreadBytes / 2) this.resumeIfPaused();
    return next;
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
