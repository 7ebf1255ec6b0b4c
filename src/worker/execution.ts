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

/** The worker's side of one task run. */
export class Execution implements RunControl {
  private holdsSlot = true;
  private secedeReported = false;
  private finished = false;
  private clientAsked = false;

  /** Call only once `gate` granted this run a slot. */
  constructor(
    private readonly gate: SlotGate,
    private readonly onSecede: OnSecede,
    private readonly signal: AbortSignal,
    /** The worker's client for task code on its main thread (the inline executor). */
    private readonly taskClient: () => Promise<unknown> = noTaskClient,
  ) {}

  client(): Promise<unknown> {
    this.clientAsked = true;
    return this.taskClient();
  }

  usesClient(): void {
    this.clientAsked = true;
  }

  /** Whether the run asked for a client, over or not. */
  get askedClient(): boolean {
    return this.clientAsked;
  }

  /**
   * Whether the run, not over yet, asked for a client: it may be waiting for
   * other tasks (see `LostSpills`, which must not wait for it for good).
   */
  get holdsClient(): boolean {
    return this.clientAsked && !this.finished;
  }

  secede(computeDuration: number): void {
    if (this.finished || !this.holdsSlot) return;
    this.holdsSlot = false;
    this.gate.release();
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
    if (this.holdsSlot) {
      this.holdsSlot = false;
      this.gate.release();
    }
  }
}

function noTaskClient(): Promise<unknown> {
  return Promise.reject(new Error("getClient(): this run has no client"));
}
