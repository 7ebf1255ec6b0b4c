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
  private doingValue = "starting";
  /** The step logs its own wait (a worker's registration: every 10 s, saying why). */
  private logsItsOwnWait = false;
  /** The warning came due in a step that logs its own wait: the next step gets a whole `ms`. */
  private warningDeferred = false;
  /** The warning was put off past such a step: it then gives the whole start's time. */
  private warningPutOff = false;
  private readonly startedAt = Date.now();
  private warning: ReturnType<typeof setTimeout> | undefined;
  private readonly idle: { readonly promise: Promise<never>; readonly stop: () => void };
  private readonly stalledPromise: Promise<never>;
  private stalledValue = false;

  constructor(
    /** The server starting, as its messages name it: "scheduler", "worker". */
    private readonly server: string,
    private readonly logger: Pick<Logger, "warn">,
    private readonly ms = SLOW_START_WARNING_MS,
  ) {
    this.armWarning();
    this.idle = rejectWhenIdle(
      () =>
        new Error(
          `the ${server}'s start can never finish: nothing was left to run while it was still ${this.doingValue}`,
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

  /** The step the start is in. */
  get doing(): string {
    return this.doingValue;
  }

  set doing(step: string) {
    this.doingValue = step;
    this.logsItsOwnWait = false;
    if (this.warningDeferred) {
      // Waiting on a scheduler not up yet is no sign of this step being slow.
      this.warningDeferred = false;
      this.warningPutOff = true;
      this.armWarning();
    }
  }

  /**
   * Enter `step`, which logs its own wait (a worker's registration, with why
   * it waits): not warned of again; a warning due meanwhile waits a whole
   * `ms` more into the step after it.
   */
  enterLoggingItsOwnWait(step: string): void {
    this.doing = step;
    this.logsItsOwnWait = true;
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
    this.warningDeferred = false;
    this.idle.stop();
  }

  private armWarning(): void {
    this.warning = setTimeout(() => this.warn(), this.ms);
    // A warning must not keep the process alive, nor make it wait to exit.
    this.warning.unref();
  }

  private warn(): void {
    if (this.logsItsOwnWait) {
      this.warningDeferred = true;
      return;
    }
    const after = this.warningPutOff
      ? Math.round((Date.now() - this.startedAt) / 100) / 10
      : this.ms / 1000;
    this.logger.warn(
      { doing: this.doingValue },
      `the ${this.server} has not started after ${after} s: it is still ${this.doingValue}, and its start waits for it`,
    );
  }
}
