/**
 * A server's start that does not finish: a plugin's `start` or `setup`, a
 * preload's `weftSetup` or a scheduler's answer that never comes kept
 * `Scheduler.start` or `Worker.start`, and a `LocalCluster.start`, `weft
 * scheduler` or `weft worker` waiting on it, without a word. Dask waits on a
 * server's start as long as it takes (a setup may load something large), and
 * so does this: it warns once the start has run a while, naming the step it is
 * in, and fails it when nothing is left to run while the step waits (the step
 * can never end then: in a program whose cluster is in process, Node.js exited
 * silently with code 13, an unsettled top-level `await`).
 */

import type { Logger } from "pino";
import { rejectWhenIdle } from "./loopIdle.ts";

/** After how long a start still running is warned of, in ms. */
export const SLOW_START_WARNING_MS = 10_000;

/** One start watched: what it does now, said in its warning and its failure. */
export class StartWatch {
  /** The step the start is in. */
  doing = "starting";
  private readonly warning: ReturnType<typeof setTimeout>;
  private readonly idle: { readonly promise: Promise<never>; readonly stop: () => void };
  private readonly stalledPromise: Promise<never>;
  private stalledValue = false;

  constructor(
    /** The server starting, as its messages name it: "scheduler", "worker". */
    server: string,
    logger: Pick<Logger, "warn">,
    ms = SLOW_START_WARNING_MS,
  ) {
    this.warning = setTimeout(() => {
      logger.warn(
        { doing: this.doing },
        `the ${server} has not started after ${ms / 1000} s: it is still ${this.doing}, and its start waits for it`,
      );
    }, ms);
    // A warning must not keep the process alive, nor make it wait to exit.
    this.warning.unref();
    this.idle = rejectWhenIdle(
      () =>
        new Error(
          `the ${server}'s start can never finish: nothing was left to run while it was still ${this.doing}`,
        ),
    );
    // A step guarding its own wait (an inline worker importing a task module that is the
    // program waiting on this start) says more, and fails at the same idle: it goes first.
    this.stalledPromise = this.idle.promise.catch(
      (err: unknown) =>
        new Promise<never>((_, reject) =>
          setImmediate(() => {
            this.stalledValue = true;
            reject(err);
          }),
        ),
    );
  }

  /** Rejects once nothing is left to run while the start waits; pending otherwise. */
  get stalled(): Promise<never> {
    return this.stalledPromise;
  }

  /** True once {@link stalled} rejected. */
  get hasStalled(): boolean {
    return this.stalledValue;
  }

  /** The start is over: no warning, no failure any more. */
  clear(): void {
    clearTimeout(this.warning);
    this.idle.stop();
  }
}
