/**
 * The server's control of the Active Memory Manager (Dask's
 * `ActiveMemoryManagerExtension.start`, `stop`, `running` and `run_once`):
 * the timer that runs a round every `activeMemoryManagerIntervalMs`, started
 * by the scheduler when `activeMemoryManager` is on, and at run time by a
 * client (`client.amm`, `weft amm`) whatever that option said. A round is the
 * server's: it hands the state machine a `reduce-replicas` stimulus (see
 * `state/activeMemoryManager.ts`), so a round run now and a periodic one are
 * logged and validated alike.
 */

import type { AmmStatus } from "../protocol/messagesSession.ts";

/** Starts, stops and runs the Active Memory Manager's rounds. */
export class AmmControl {
  private timer: ReturnType<typeof setInterval> | null = null;

  /**
   * @param intervalMs the time between rounds while they run.
   * @param round runs one round now: the number of replicas it asked workers to drop.
   * @param mayRun false once the server closes: a start then does nothing.
   */
  constructor(
    readonly intervalMs: number,
    private readonly round: () => number,
    private readonly mayRun: () => boolean,
  ) {}

  /** True while a round runs every {@link intervalMs}. */
  get running(): boolean {
    return this.timer !== null;
  }

  /** Whether rounds run, and how often. */
  get status(): AmmStatus {
    return { running: this.running, intervalMs: this.intervalMs };
  }

  /** Run a round every {@link intervalMs} from now on: nothing if they run, or the server closes. */
  start(): void {
    if (this.timer !== null || !this.mayRun()) return;
    this.timer = setInterval(() => this.round(), this.intervalMs);
    // The server's listener keeps the process alive, not this.
    this.timer.unref();
  }

  /** Run no more rounds (but those asked for with {@link runOnce}): nothing if none run. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Run one round now, whether rounds run or not: the number of replicas it asked workers to drop. */
  runOnce(): number {
    return this.round();
  }
}
