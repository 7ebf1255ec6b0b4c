/**
 * The thread slots of a worker: at most `nthreads` tasks compute at once. A
 * task that secedes gives its slot back; one that rejoins waits for a slot and
 * goes before tasks that have not started, as in Dask's secede-aware thread
 * pool (a rejoining thread takes the next free thread instead of new work).
 */

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
}

/** Counts free slots; hands them out first to rejoining tasks, then in arrival order. */
export class SlotGate {
  private free: number;
  private readonly rejoiners: Waiter[] = [];
  private readonly starters: Waiter[] = [];

  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) {
      throw new RangeError(`slots must be a positive integer, got ${slots}`);
    }
    this.free = slots;
  }

  /** Slots not taken. */
  get available(): number {
    return this.free;
  }

  /** Tasks waiting for a slot (rejoining ones included). */
  get waiting(): number {
    return this.rejoiners.length + this.starters.length;
  }

  /**
   * Take a slot to start a task if one is free and nobody waits for one; false
   * otherwise (then {@link acquire}). Spares a promise and a turn per task.
   */
  tryAcquire(): boolean {
    return this.take(this.starters);
  }

  /** Wait for a slot to start a task. Rejects with the signal's reason if aborted while waiting. */
  acquire(signal?: AbortSignal): Promise<void> {
    return this.wait(this.starters, signal);
  }

  /** Wait for a slot for a task that rejoins; it goes before every task waiting to start. */
  acquireForRejoin(signal?: AbortSignal): Promise<void> {
    return this.wait(this.rejoiners, signal);
  }

  /** Give a slot back (a task ended or seceded). */
  release(): void {
    const next = this.rejoiners.shift() ?? this.starters.shift();
    if (next !== undefined) {
      this.grant(next);
      return;
    }
    if (this.free >= this.slots) throw new Error("SlotGate.release() without a matching acquire");
    this.free++;
  }

  private wait(queue: Waiter[], signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.take(queue)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: null };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      queue.push(waiter);
    });
  }

  /**
   * Take a free slot for a task of `queue` if nobody it would overtake waits:
   * no rejoiner, and for a starter no other starter either.
   */
  private take(queue: Waiter[]): boolean {
    if (
      this.free > 0 &&
      this.rejoiners.length === 0 &&
      (queue === this.rejoiners || this.starters.length === 0)
    ) {
      this.free--;
      return true;
    }
    return false;
  }

  private grant(w: Waiter): void {
    if (w.onAbort !== null) w.signal?.removeEventListener("abort", w.onAbort);
    w.resolve();
  }
}
