/**
 * One run of a task on a worker, as the worker's side of `secede()` /
 * `rejoin()` sees it: it holds a slot of the {@link SlotGate} while it
 * computes, gives it back when it secedes, and waits for one when it rejoins.
 * It reports the secession to the state machine exactly once, and always
 * before the run's completion event, whichever way the news arrives first.
 */

import type { RunControl } from "./executor.ts";
import type { SlotGate } from "./slotGate.ts";

/** Told that the run seceded after `computeDuration` seconds (once). */
export type OnSecede = (computeDuration: number) => void;

/**
 * The threads a worker has for runs that seceded (the pool's spare threads; none
 * bound the inline executor): a seceded run keeps its thread, without a slot,
 * until it ends or rejoins. A run that secedes when all of them are taken keeps
 * its slot instead: given back, the slot would go to a task with no thread to
 * run on, which would hold it while the seceded runs, which hold the threads,
 * wait for it in `rejoin()` (a deadlock Dask's unbounded pool does not have).
 */
export class SpareThreads {
  /** Seceded runs holding a thread but no slot. */
  taken = 0;
  constructor(readonly limit: number) {}
}

/** The worker's side of one task run. */
export class Execution implements RunControl {
  private holdsSlot = true;
  /** Seceded without a slot: counted in {@link SpareThreads.taken}. */
  private onSpareThread = false;
  private secedeReported = false;
  private finished = false;

  /** Call only once `gate` granted this run a slot. */
  constructor(
    private readonly gate: SlotGate,
    private readonly onSecede: OnSecede,
    private readonly signal: AbortSignal,
    private readonly spare: SpareThreads = new SpareThreads(Number.POSITIVE_INFINITY),
    /** The worker's client for task code on its main thread (the inline executor). */
    private readonly taskClient: () => Promise<unknown> = noTaskClient,
  ) {}

  client(): Promise<unknown> {
    return this.taskClient();
  }

  secede(computeDuration: number): void {
    if (this.finished || !this.holdsSlot) return;
    // The state machine hears of it either way (the task is long-running for it
    // and Dask); only the slot stays taken while no spare thread is left.
    if (this.spare.taken < this.spare.limit) {
      this.holdsSlot = false;
      this.onSpareThread = true;
      this.spare.taken++;
      this.gate.release();
    }
    // Not synchronously: the task may be running inside the caller's stack.
    queueMicrotask(() => this.report(computeDuration));
  }

  async rejoin(): Promise<void> {
    if (this.finished || this.holdsSlot) return;
    await this.gate.acquireForRejoin(this.signal);
    if (this.finished) {
      this.gate.release();
      return;
    }
    this.holdsSlot = true;
    this.leaveSpareThread();
  }

  private leaveSpareThread(): void {
    if (!this.onSpareThread) return;
    this.onSpareThread = false;
    this.spare.taken--;
  }

  private report(computeDuration: number): void {
    if (this.secedeReported || this.finished) return;
    this.secedeReported = true;
    this.onSecede(computeDuration);
  }

  /**
   * The run is over. `secededAfter` (from the outcome) reports a secession the
   * worker has not heard of yet; the slot, if held, is given back.
   */
  finish(secededAfter: number | null): void {
    if (this.finished) return;
    if (secededAfter !== null) this.report(secededAfter);
    this.finished = true;
    this.leaveSpareThread();
    if (this.holdsSlot) {
      this.holdsSlot = false;
      this.gate.release();
    }
  }
}

function noTaskClient(): Promise<unknown> {
  return Promise.reject(new Error("getClient(): this run has no client"));
}
