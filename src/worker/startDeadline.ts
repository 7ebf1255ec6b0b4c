/**
 * A worker's whole start bounded by `deathTimeoutMs`, as Dask's
 * `Server.start` waits for `start_unsafe` within `death_timeout`: a preload's
 * `weftSetup`, a plugin's `setup` or a nanny that never ends would otherwise
 * keep the start, and whoever waits on it (a `weft worker --death-timeout` in
 * a batch job), waiting for good.
 *
 * The registration is left be: its waits end themselves, each with its own
 * error, which says more than a deadline would (a scheduler that refuses
 * connections at this same deadline, `… still refused after N ms`; one that
 * does not answer `register-worker`, or a name taken, within
 * `connectTimeoutMs`); a start registered past the deadline fails then.
 */

import { MAX_TIMER_MS } from "../util/timers.ts";

/** The deadline of one start, and what the start does meanwhile. */
export class StartDeadline {
  /** When the start began (`Date.now()`): the wait for the scheduler ends `ms` after it too. */
  readonly startedAt = Date.now();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The deadline came during {@link exemptWhile}. */
  private passedWhileExempt = false;
  private exempt = false;
  private message: string | null = null;

  constructor(
    /** The bound in ms; null: none. */
    private readonly ms: number | null,
    /** Told once, at the deadline: the worker closes, which ends the start. */
    private readonly expired: () => void,
    /** What the start does now, said in the error if the deadline comes meanwhile. */
    private readonly doing: () => string = () => "starting",
  ) {
    // Not unref'd: a start that waits only on a promise that never settles would let
    // the process exit half started.
    if (ms !== null && ms <= MAX_TIMER_MS) this.timer = setTimeout(() => this.expire(), ms);
  }

  /** Why the start failed, once the deadline came: `the worker did not start within …`. */
  get timedOut(): string | null {
    return this.message;
  }

  /**
   * Run `wait` (the registration), whose waits end themselves: if the
   * deadline comes meanwhile and `wait` succeeds all the same, the start
   * times out then; if it fails, its error stands.
   */
  async exemptWhile<T>(wait: () => Promise<T>): Promise<T> {
    this.exempt = true;
    let done: T;
    try {
      done = await wait();
    } finally {
      this.exempt = false;
    }
    if (this.passedWhileExempt) this.expire();
    return done;
  }

  /** The start is over (done or failed): no deadline any more. */
  clear(): void {
    clearTimeout(this.timer);
  }

  private expire(): void {
    if (this.message !== null) return;
    if (this.exempt) {
      this.passedWhileExempt = true;
      return;
    }
    this.message = `the worker did not start within its death timeout (deathTimeoutMs, ${this.ms} ms): it was still ${this.doing()}; it closed`;
    this.expired();
  }
}
