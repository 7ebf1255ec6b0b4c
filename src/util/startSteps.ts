/**
 * A server's start raced against its close: a start step awaits code the
 * server does not control (a plugin's `start` or `setup`, a preload module's
 * `weftSetup`, a scheduler's answer), which may never settle. A `close()`
 * meanwhile must end the start at once, not after that step, which may be
 * never; and what the step makes if it ends after all must be undone, not
 * left running with nobody to close it.
 */

import { callGuarded } from "./guardedCall.ts";

/** The steps of one start, and the close that stops them. */
export class StartSteps {
  private stopped = false;
  private readonly aborter = new AbortController();
  private resolveStop: () => void = () => {};
  /** Resolves on {@link stop}: every step in progress loses the race to it. */
  private readonly stopping = new Promise<void>((resolve) => {
    this.resolveStop = resolve;
  });

  constructor(
    /** What a step stopped by the close rejects with (the server's "closed while starting"). */
    private readonly message: string,
    /** Told of an `undo` that failed (what a step made after the close could not be closed). */
    private readonly undoFailed: (err: unknown) => void,
  ) {}

  /** True once {@link stop} was called. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Aborted on {@link stop}, with the message: for a step's dials and waits,
   * which the step's rejection leaves running. A connect try left so (a TLS
   * handshake that never completes, packets dropped) held the process open
   * until its timeout, 30 s after the close.
   */
  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** The server is closing: the step in progress, and every later one, rejects with the message. */
  stop(): void {
    this.stopped = true;
    this.resolveStop();
    this.aborter.abort(new Error(this.message));
  }

  /**
   * Run `work` and wait until it settles, unless {@link stop} comes first (or
   * came already: then `work` is not called). Stopped, it rejects with the
   * message, even if `work` settled meanwhile; a value `work` makes then or
   * later goes to `undo`, and an error of `work` after the stop is dropped:
   * the close is the news, not what it made the step run into.
   */
  async step<T>(work: () => PromiseLike<T> | T, undo?: (late: T) => unknown): Promise<T> {
    if (this.stopped) throw new Error(this.message);
    const running = (async () => work())();
    await Promise.race([running.then(noop, noop), this.stopping]);
    if (!this.stopped) return running;
    running.then((late) => {
      if (undo !== undefined) callGuarded(() => undo(late), this.undoFailed);
    }, noop);
    throw new Error(this.message);
  }
}

function noop(): void {}
