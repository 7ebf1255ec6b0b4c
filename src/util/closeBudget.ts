/**
 * A bound on how long a close waits on code it does not control (plugins'
 * teardowns, preload modules' `weftTeardown`s): a teardown that never settles
 * must not stop a worker, nanny or scheduler from closing.
 */

import { MAX_TIMER_MS } from "./timers.ts";

/**
 * How long, in seconds, a close waits on plugins' and preload modules'
 * teardowns when it is given no timeout (`Scheduler.close()`, a nanny
 * stopping): a worker's `close(timeout = 30)` default.
 */
export const DEFAULT_CLOSE_TIMEOUT_S = 30;

/** A moment after which a close waits on no more teardowns. */
export class CloseBudget {
  /** Resolves at the deadline; never for one of `Infinity`. */
  private readonly reached: Promise<false>;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `seconds` from now: 0, negative or NaN is now; beyond what a Node.js timer
   * waits (about 24.8 days), or `Infinity`, is never.
   */
  constructor(
    /** The seconds from its making to its deadline, as given. */
    readonly seconds: number,
  ) {
    const ms = seconds > 0 ? seconds * 1000 : 0;
    this.reached = new Promise<false>((resolve) => {
      if (ms <= MAX_TIMER_MS) {
        // Not unref'd: a process whose close waits only on a teardown that never
        // settles would otherwise exit half closed, not go on with the close.
        this.timer = setTimeout(() => resolve(false), ms);
      }
    });
  }

  /**
   * Wait until `work` settles or the deadline, whichever is first: true if it
   * settled (a rejection is not rethrown: give `work` its own handler), false if
   * the deadline came first (it still runs, unwaited).
   */
  settles(work: unknown): Promise<boolean> {
    let done = false;
    const settled = Promise.resolve(work).then(
      () => (done = true),
      () => (done = true),
    );
    // Past the deadline, what settles within the turn (a teardown that is not async) still counts.
    const late = this.reached.then(
      () => new Promise<boolean>((resolve) => setImmediate(() => resolve(done))),
    );
    return Promise.race([settled, late]);
  }

  /** Stop the timer (the close is over): it would keep the process alive until the deadline. */
  clear(): void {
    clearTimeout(this.timer);
  }
}
