/**
 * Coalesce the messages sent within an interval into one frame, a list: the
 * port of Dask's `BatchedSend`. The first message after a quiet spell leaves at
 * the next turn of the event loop; later ones wait until `intervalMs` after the
 * previous batch. A batch is not sent before the previous one was taken by the
 * transport (backpressure).
 */

import { warnCallbackFailed } from "../util/callbackWarning.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import type { Comm } from "./comm.ts";
import { CommClosedError, isDataError } from "./errors.ts";

/** Options of {@link BatchedSend}. */
export interface BatchedSendOptions {
  /** Minimum milliseconds between two batches; 0 sends at the next turn of the event loop. Default 2. */
  intervalMs?: number;
  /**
   * Told when sending failed; the BatchedSend is closed, its buffer dropped and
   * its comm aborted. What it throws, or a rejection of the promise it returns,
   * is a process warning (`process.emitWarning`).
   */
  onError?: (err: unknown) => void;
  /**
   * Told when one message cannot be sent (it cannot be encoded, or is larger
   * than `maxMessageBytes`) while the comm stays open: the other messages of its
   * batch are sent, and the stream goes on. Without it, such a failure closes
   * the stream as any other (`onError`), as does an error it throws or a
   * rejection of the promise it returns (once it rejects). A batch
   * too large only as a whole is sent in parts either way.
   */
  onMessageError?: (err: unknown, msg: unknown) => void;
  /**
   * Told of each batch once the transport took it (TCP: its bytes were handed
   * to the OS), its messages that could not be sent dropped: those messages no
   * longer wait here. Not told of a batch lost with a failed stream. What it
   * throws is a process warning.
   */
  onTaken?: (batch: readonly unknown[]) => void;
  /**
   * Whether `msg` ends its batch (a large answer), the batch holding no other
   * such message: coalesced, 16 answers of 100 MiB were encoded into one batch
   * at once, the sender's memory growing by a gigabyte and more. Each batch
   * waits for the previous one to be taken, so that one such message at a time
   * is encoded. The small messages before it go in its batch.
   */
  alone?: (msg: unknown) => boolean;
}

/** Default interval between batches, in milliseconds. */
export const DEFAULT_BATCH_INTERVAL_MS = 2;

/** Batches messages over one comm. The receiver gets arrays of messages. */
export class BatchedSend {
  private buffer: unknown[] = [];
  private readonly intervalMs: number;
  private readonly onError: ((err: unknown) => void) | undefined;
  private readonly onMessageError: ((err: unknown, msg: unknown) => void) | undefined;
  private readonly onTaken: ((batch: readonly unknown[]) => void) | undefined;
  private readonly alone: ((msg: unknown) => boolean) | undefined;
  private nextDeadline = 0;
  private armed = false;
  private sending: Promise<void> | null = null;
  private closedFlag = false;
  /** Number of messages sent. */
  messageCount = 0;
  /** Number of batches sent. */
  batchCount = 0;

  constructor(
    /** The connection the batches are written to. */
    readonly comm: Comm,
    options: BatchedSendOptions = {},
  ) {
    const interval = options.intervalMs ?? DEFAULT_BATCH_INTERVAL_MS;
    // A longer timer of Node.js fires after 1 ms; Infinity would also never send.
    if (typeof interval !== "number" || !(interval >= 0 && interval <= MAX_TIMER_MS)) {
      throw new RangeError(
        `BatchedSend intervalMs must be a number of ms from 0 to ${MAX_TIMER_MS} (about 24.8 days), got ${showValue(interval)}`,
      );
    }
    this.intervalMs = interval;
    this.onError = options.onError;
    this.onMessageError = options.onMessageError;
    this.onTaken = options.onTaken;
    this.alone = options.alone;
  }

  /** True once closed (by `close`, `abort` or a failed send). */
  get isClosed(): boolean {
    return this.closedFlag || this.comm.isClosed;
  }

  /** Number of messages waiting for the next batch. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Queue messages for the next batch. Throws a `CommClosedError` once closed. */
  send(...msgs: unknown[]): void {
    if (this.isClosed)
      throw new CommClosedError(`batched stream to ${this.comm.peerAddress} is closed`);
    for (const m of msgs) this.buffer.push(m);
    if (!this.armed && this.sending === null) this.arm();
  }

  private arm(): void {
    this.armed = true;
    const wait = this.nextDeadline - performance.now();
    if (wait <= 0) setImmediate(this.tick);
    else setTimeout(this.tick, wait);
  }

  private readonly tick = (): void => {
    this.armed = false;
    if (this.closedFlag || this.buffer.length === 0) return;
    // A flush() took the batch this turn was armed for and its send is under way: the
    // rest waits for it (sent() arms again), as a second send beside it would overtake
    // the first's halves and, the connection broken, report the failure twice.
    if (this.sending !== null) return;
    this.flushNow();
  };

  /** The next batch, taken from the buffer: all of it, or up to and with its first message {@link alone}. */
  private nextBatch(): unknown[] {
    const alone = this.alone;
    const at = alone === undefined ? -1 : this.buffer.findIndex((m) => alone(m));
    if (at < 0) {
      const batch = this.buffer;
      this.buffer = [];
      return batch;
    }
    // The messages before it with it: in a batch of their own, answers sent alone amid
    // a client's task updates made twice as many batches, each waiting for the last to
    // be taken (100,000 messages over TCP, 1 in 100 alone: 268-286 ms, now 145-151 ms).
    return this.buffer.splice(0, at + 1);
  }

  private flushNow(): void {
    const batch = this.nextBatch();
    // What a message sent alone left in the buffer was due already: it goes once the
    // transport took this batch, not an interval later. Else 1,000 answers sent alone
    // (a client's concurrent who-has) took 1,000 intervals: 1.3 s where 0.06 s before.
    this.nextDeadline = this.buffer.length > 0 ? 0 : performance.now() + this.intervalMs;
    this.batchCount++;
    this.messageCount += batch.length;
    this.sending = this.comm.send(batch).then(
      () => this.sent(batch),
      (err: unknown) => {
        // Returned, so that `sending` (awaited by flush and close) covers the halves too.
        if (isDataError(err) && !this.comm.isClosed) {
          return this.sendInHalves(batch, err).then(() => this.sent(batch));
        }
        this.fail(err);
      },
    );
  }

  private sent(batch: readonly unknown[]): void {
    this.sending = null;
    // The halves of a batch may have failed the stream: its messages are lost, not taken.
    if (this.onTaken !== undefined && !this.closedFlag) {
      const told = this.onTaken;
      callGuarded(
        () => told(batch),
        (thrown) => warnCallbackFailed("BatchedSend onTaken failed", thrown),
      );
    }
    if (!this.closedFlag && this.buffer.length > 0 && !this.armed) this.arm();
  }

  private fail(err: unknown): void {
    this.sending = null;
    this.abort();
    // A stream that cannot send ends its connection: left open, the peer would go on
    // talking (heartbeats) to a process that can no longer answer, and nothing would
    // notice that every message to it is dropped.
    if (!this.comm.isClosed) {
      this.comm.abort(err instanceof Error ? err : new Error(String(err)));
    }
    // Thrown from a batch's send, it was an unhandled rejection (the process ended).
    callGuarded(
      () => this.onError?.(err),
      (thrown) => warnCallbackFailed("BatchedSend onError failed", thrown),
    );
  }

  /**
   * `batch` could not be sent (`err`): too large as a whole, say, though each
   * of its messages fits. Send it in halves, halved again while they fail the
   * same way, in order, down to the one message at fault, which alone is told
   * to `onMessageError`, or closes the stream without it. Before, a burst of
   * messages coalesced past the limit closed the stream (a worker with a small
   * `maxMessageBytes` finishing many tasks at once shut down).
   */
  private async sendInHalves(batch: unknown[], err: unknown): Promise<void> {
    if (batch.length === 1) {
      if (this.onMessageError === undefined) {
        this.fail(err);
        return;
      }
      const told = this.onMessageError;
      // Left to reject `sending`, a throw was an unhandled rejection, and every later
      // flush() or close() rethrew it while the messages after it waited for good.
      // A rejected promise it returns fails the stream alike, once it rejects.
      callGuarded(
        () => told(err, batch[0]),
        (thrown) => this.fail(thrown),
      );
      return;
    }
    const mid = Math.ceil(batch.length / 2);
    for (const half of [batch.slice(0, mid), batch.slice(mid)]) {
      if (this.closedFlag) return;
      try {
        await this.comm.send(half);
      } catch (e) {
        if (isDataError(e) && !this.comm.isClosed) await this.sendInHalves(half, e);
        else {
          this.fail(e);
          return;
        }
      }
    }
  }

  /**
   * Send what is buffered now rather than at the next interval, and resolve
   * once it is handed to the comm (at once if closed or nothing is buffered).
   * For what must not overtake the buffer: a pool thread's client before its
   * task's result goes (`threadMain.ts`).
   */
  async flush(): Promise<void> {
    while (this.sending !== null) await this.sending;
    // Several batches, if a message goes alone.
    while (!this.closedFlag && !this.comm.isClosed && this.buffer.length > 0) {
      this.flushNow();
      await this.sending;
    }
  }

  /** Send what is buffered now, then stop; with `closeComm` (default true) close the comm too. */
  async close(closeComm = true): Promise<void> {
    if (this.sending !== null) await this.sending;
    while (!this.closedFlag && !this.comm.isClosed && this.buffer.length > 0) {
      this.flushNow();
      await this.sending;
    }
    this.closedFlag = true;
    this.buffer = [];
    if (closeComm) await this.comm.close();
  }

  /** Stop at once, dropping what is buffered. The comm is left as it is. */
  abort(): void {
    this.closedFlag = true;
    this.buffer = [];
  }
}
