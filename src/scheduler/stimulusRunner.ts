/**
 * Feeds stimuli to the scheduler state machine on behalf of the server. A
 * malformed stimulus (`InvalidStimulus`: a message from the wire that is not
 * what it claims) is rejected and logged without touching the state; the
 * well-formed stimuli that came with it are still handled, in order. Any other
 * exception is a bug after which the state machine cannot be trusted: the
 * runner stops and reports it once.
 */

import type { Logger } from "pino";
import type { SchedulerMessage } from "../protocol/messages.ts";
import { asError } from "../util/asError.ts";
import type { Counters } from "./counters.ts";
import { InvalidStimulus } from "./state/errors.ts";
import type { SchedulerEvent } from "./state/events.ts";
import type { SchedulerState } from "./state/schedulerState.ts";

/** Describes a stimulus for a log line. */
function describe(ev: unknown): Record<string, unknown> {
  if (typeof ev !== "object" || ev === null) return { stimulus: String(ev) };
  const e = ev as { kind?: unknown; worker?: unknown; msg?: unknown };
  const msg = typeof e.msg === "object" && e.msg !== null ? (e.msg as Record<string, unknown>) : {};
  return {
    kind: e.kind,
    worker: e.worker,
    op: msg.op,
    client: msg.clientId,
    stimulusId: msg.stimulusId,
  };
}

/**
 * The outcome of {@link StimulusRunner.tryRun}; when refused, `standIn` holds
 * the messages of the stimulus handled in its place, if any.
 */
export type RunOutcome =
  | { readonly ok: true; readonly messages: SchedulerMessage[] }
  | { readonly ok: false; readonly error: Error; readonly standIn?: SchedulerMessage[] };

/** Runs stimuli through a {@link SchedulerState}, rejecting malformed ones. */
export class StimulusRunner {
  private failure: Error | null = null;
  /** A stand-in for a rejected stimulus is being handled. */
  private standingIn = false;

  constructor(
    private readonly state: SchedulerState,
    private readonly logger: Logger,
    private readonly counters: Counters,
    /** Told once, when the state machine failed. */
    private readonly onFailure: (err: Error) => void,
    /**
     * Told of each batch of stimuli handled, not of those rejected: for what
     * records the workers' reports, which must not take in a report before
     * the state machine checked it.
     */
    private readonly onHandled: (events: readonly SchedulerEvent[]) => void = () => {},
    /**
     * Told of each stimulus rejected as malformed, and why: for telling the
     * client that sent it, whose request would otherwise wait forever. It may
     * return a stimulus to handle in its place, in its turn (a worker's
     * malformed report of a task becomes the task's failure).
     */
    private readonly onRejected: (
      ev: SchedulerEvent,
      err: InvalidStimulus,
    ) => SchedulerEvent | null = () => null,
  ) {}

  /** The bug that stopped the runner, if any. */
  get failed(): Error | null {
    return this.failure;
  }

  /**
   * Handle `events`; returns the messages to send. Malformed events are
   * rejected (logged, counted) and the others handled.
   */
  run(events: SchedulerEvent[]): SchedulerMessage[] {
    if (this.failure !== null || events.length === 0) return [];
    try {
      const out = this.state.handleStimuli(events);
      this.counters.observe(events);
      this.onHandled(events);
      return out;
    } catch (err) {
      if (!(err instanceof InvalidStimulus)) return this.fail(err);
      if (events.length === 1) return this.reject(events[0], err);
    }
    // One of them is malformed and nothing was handled: one at a time.
    const out: SchedulerMessage[] = [];
    for (const ev of events) {
      const r = this.tryRun([ev]);
      if (r.ok) {
        for (const m of r.messages) out.push(m);
      } else if (this.failure !== null) {
        return out;
      } else if (r.standIn !== undefined) {
        for (const m of r.standIn) out.push(m);
      }
    }
    return out;
  }

  /**
   * Handle `events`; a malformed one is rejected (logged, counted) and
   * returned as the error, nothing handled. For handshakes, whose answer
   * depends on it.
   */
  tryRun(events: SchedulerEvent[]): RunOutcome {
    if (this.failure !== null) return { ok: false, error: this.failure };
    try {
      const messages = this.state.handleStimuli(events);
      this.counters.observe(events);
      this.onHandled(events);
      return { ok: true, messages };
    } catch (err) {
      if (err instanceof InvalidStimulus) {
        const standIn = this.reject(events[0], err);
        return { ok: false, error: err, standIn };
      }
      this.fail(err);
      return { ok: false, error: this.failure ?? (err as Error) };
    }
  }

  /** Reject `ev`; the messages of the stimulus handled in its place, if any. */
  private reject(ev: SchedulerEvent, err: InvalidStimulus): SchedulerMessage[] {
    this.counters.rejectedMessages++;
    this.logger.error({ ...describe(ev), reason: err.message }, "rejected a malformed message");
    // A stand-in refused in turn gets none: it is logged like any other.
    if (this.standingIn) return [];
    const standIn = this.onRejected(ev, err);
    if (standIn === null) return [];
    this.standingIn = true;
    try {
      const r = this.tryRun([standIn]);
      return r.ok ? r.messages : [];
    } finally {
      this.standingIn = false;
    }
  }

  private fail(err: unknown): SchedulerMessage[] {
    const e = asError(err);
    if (this.failure === null) {
      this.failure = e;
      this.logger.fatal({ err: e }, "the scheduler state machine failed; the scheduler stops");
      this.onFailure(e);
    }
    return [];
  }
}
