/**
 * A FIFO of received messages with waiting readers: the receive side shared
 * by every {@link Comm} implementation.
 */

import { Fifo } from "../util/fifo.ts";
import { CommClosedError } from "./errors.ts";

interface Waiter {
  resolve(msg: unknown): void;
  reject(err: Error): void;
}

/** Messages not yet read, and readers waiting for one. O(1) push and shift. */
export class MessageQueue {
  private items = new Fifo<unknown>();
  /** The size the transport gave each item kept, in order (see {@link bytes}). */
  private sizes = new Fifo<number>();
  private keptBytes = 0;
  private readonly waiters: Waiter[] = [];
  private endError: Error | null = null;
  private ended = false;

  /** Number of messages waiting to be read. */
  get size(): number {
    return this.items.length;
  }

  /** The sizes of the messages waiting to be read, as the transport gave them (0 when it gave none). */
  get bytes(): number {
    return this.keptBytes;
  }

  /**
   * Hand a message (of `bytes` on the wire, if the transport says) to the
   * oldest waiting reader, or keep it. Ignored once ended.
   */
  push(msg: unknown, bytes = 0): void {
    if (this.ended) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve(msg);
      return;
    }
    this.items.push(msg);
    this.sizes.push(bytes);
    this.keptBytes += bytes;
  }

  /**
   * No more messages will come: waiting readers (and later ones, once the kept
   * messages are read) get a `CommClosedError` caused by `error`.
   * With `drop`, the kept messages are discarded.
   */
  end(error: Error | null, drop: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.endError = error;
    if (drop) {
      this.items = new Fifo();
      this.sizes = new Fifo();
      this.keptBytes = 0;
    }
    const waiters = this.waiters.splice(0);
    for (const w of waiters) w.reject(this.closedError());
  }

  /** The next message, in order. */
  shift(): Promise<unknown> {
    if (this.items.length > 0) {
      this.keptBytes -= this.sizes.shift() ?? 0;
      return Promise.resolve(this.items.shift());
    }
    if (this.ended) return Promise.reject(this.closedError());
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
    });
  }

  private closedError(): CommClosedError {
    const err = this.endError;
    return new CommClosedError(
      err === null ? "comm closed" : `comm closed: ${err.message}`,
      err === null ? undefined : { cause: err },
    );
  }
}
