/**
 * What a client knows of one key it holds futures for: the latest news from
 * the scheduler, where the result is held, and how many futures refer to it.
 * Every future of the same key shares one record.
 */

/**
 * Where a key is, as the client last heard:
 * - `pending`: not computed yet (or being recomputed after a loss or for a retry);
 * - `finished`: the result is in a worker's memory;
 * - `error`: the task (or one it depends on) failed;
 * - `no-worker`: no connected worker can run it yet;
 * - `cancelled`: cancelled, or it cannot be computed;
 * - `lost`: the client closed or lost its scheduler.
 */
export type FutureStatus = "pending" | "finished" | "error" | "no-worker" | "cancelled" | "lost";

/**
 * Waiters a record lists in an array, as most have one or two; beyond, they are
 * counted in a Map, where dropping one is O(1) (see `KeyRecord.waiters`).
 */
const MAX_LISTED_WAITERS = 16;

/** The client's state of one key. */
export class KeyRecord {
  /** What the client last heard of the key (see {@link FutureStatus}). */
  status: FutureStatus = "pending";
  /** Why the key failed, for `error`, `no-worker`, `cancelled` and `lost`. */
  error: Error | null = null;
  /** The workers holding the result when it was last reported. */
  holders: readonly string[] = [];
  /** The result's type name, as the worker reported it. */
  typename: string | null = null;
  /** Futures referring to this key that were not released. */
  refs = 0;
  /** The client's count of submissions when one last asked for this key anew. */
  submission = 0;
  /**
   * The `error` is that of a submission that could not be sent: the scheduler
   * never had the key from this client, so asking for it again starts afresh.
   */
  unsent = false;
  /**
   * Submissions that asked for the key since one asked for it anew, while none of
   * them is known to have reached the scheduler (0 once one is: the scheduler told
   * of the key, or an ask was sent), and how many of them could not be sent.
   */
  asks = 0;
  /** How many of those `asks` could not be sent. */
  failedAsks = 0;
  /**
   * The callbacks waiting for the next change: an array of them (one callback may
   * wait for several futures of the key, gather's, and is called once for each),
   * or, past {@link MAX_LISTED_WAITERS}, each with how many times it waits. Many
   * futures of one key (a pure call submitted many times) each waiting, an array
   * searched to drop each waiter that gave up cost O(n²): 160,000 of them, a
   * `wait` timing out took 38 s.
   */
  private waiters: ((rec: KeyRecord) => void)[] | Map<(rec: KeyRecord) => void, number> | null =
    null;

  /** What lets the process end again, while a waiter is listed (see `holdLoop`). */
  private releaseLoop: (() => void) | null = null;

  constructor(
    /** The key. */
    readonly key: string,
    /**
     * Keeps the process alive until the function it returns is called: while
     * anything waits for the key's next change (`await future`, `wait`,
     * `asCompleted`), which only the scheduler can bring. Default: nothing.
     */
    private readonly holdLoop: (() => () => void) | null = null,
  ) {}

  /** Hold the process while a waiter is listed, and only then. */
  private syncLoopHold(): void {
    const w = this.waiters;
    const waiting = w !== null && (Array.isArray(w) ? w.length > 0 : w.size > 0);
    if (waiting && this.releaseLoop === null && this.holdLoop !== null) {
      this.releaseLoop = this.holdLoop();
    } else if (!waiting && this.releaseLoop !== null) {
      this.releaseLoop();
      this.releaseLoop = null;
    }
  }

  /** Resolves at the next change of status (at once if `pending` is not the status). */
  settled(): Promise<void> {
    if (this.status !== "pending") return Promise.resolve();
    return this.changed();
  }

  /** Resolves at the next change of status. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.onChange(() => resolve()));
  }

  /**
   * Call `cb(this)` at the next change of status: a promise-free
   * {@link changed} for waiting on many records with one callback.
   */
  onChange(cb: (rec: KeyRecord) => void): void {
    this.addWaiter(cb);
    this.syncLoopHold();
  }

  private addWaiter(cb: (rec: KeyRecord) => void): void {
    let waiters = this.waiters;
    if (waiters === null) {
      this.waiters = [cb];
      return;
    }
    if (Array.isArray(waiters)) {
      if (waiters.length < MAX_LISTED_WAITERS) {
        waiters.push(cb);
        return;
      }
      const counted = new Map<(rec: KeyRecord) => void, number>();
      for (const w of waiters) counted.set(w, (counted.get(w) ?? 0) + 1);
      this.waiters = waiters = counted;
    }
    waiters.set(cb, (waiters.get(cb) ?? 0) + 1);
  }

  /** Forget `cb` of {@link onChange} (once) before the change (its waiter gave up). */
  offChange(cb: (rec: KeyRecord) => void): void {
    this.dropWaiter(cb);
    this.syncLoopHold();
  }

  private dropWaiter(cb: (rec: KeyRecord) => void): void {
    const waiters = this.waiters;
    if (waiters === null) return;
    if (Array.isArray(waiters)) {
      const i = waiters.lastIndexOf(cb);
      if (i >= 0) waiters.splice(i, 1);
      return;
    }
    const count = waiters.get(cb);
    if (count === undefined) return;
    if (count > 1) waiters.set(cb, count - 1);
    else waiters.delete(cb);
  }

  /** The result is in memory on `holders`. */
  finish(holders: readonly string[], typename: string | null): void {
    this.holders = holders;
    this.typename = typename;
    this.set("finished", null);
  }

  /** The key failed with `error` in `status`. */
  fail(status: "error" | "no-worker" | "cancelled" | "lost", error: Error): void {
    this.holders = [];
    this.set(status, error);
  }

  /** Back to `pending` (recomputing after a loss, retrying, or runnable again after `no-worker`). */
  reset(): void {
    this.holders = [];
    this.set("pending", null);
  }

  private set(status: FutureStatus, error: Error | null): void {
    this.status = status;
    this.unsent = false;
    this.asks = 0;
    this.error = error;
    const waiters = this.waiters;
    if (waiters === null) return;
    this.waiters = null;
    // Released before the waiters run: one waiting again holds anew.
    this.syncLoopHold();
    if (Array.isArray(waiters)) {
      for (const w of waiters) w(this);
      return;
    }
    for (const [w, count] of waiters) for (let i = 0; i < count; i++) w(this);
  }
}
