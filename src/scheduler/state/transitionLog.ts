/**
 * The scheduler's bounded logs, stored flat in a {@link TimedFlatRing}: logging allocates
 * nothing and growing copies nothing; records are materialised (tuples, objects) only
 * when read: stories, tests, dumps.
 */

import { TimedFlatRing } from "../../util/flatRing.ts";
import type { LoggedRecs, TransitionLogEntry } from "./story.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

/** The transition log: `(key, start, finish, recommendations, stimulusId, time)` records. */
export class TransitionLog extends TimedFlatRing<TransitionLogEntry> {
  constructor(maxlen: number) {
    super(maxlen, 5);
  }

  /** Append a record, evicting the oldest when full. */
  push(
    key: string,
    start: SchedulerTaskStateName,
    finish: SchedulerTaskStateName,
    recs: LoggedRecs,
    stimulusId: string,
    time: number,
  ): void {
    const at = this.claim();
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    s[i] = key;
    s[i + 1] = start;
    s[i + 2] = finish;
    s[i + 3] = recs;
    s[i + 4] = stimulusId;
    this.setTime(at, time);
  }

  protected read(at: number): TransitionLogEntry {
    const s = this.slots(at);
    const i = this.slot(at);
    return [
      s[i] as string,
      s[i + 1] as SchedulerTaskStateName,
      s[i + 2] as SchedulerTaskStateName,
      s[i + 3] as LoggedRecs,
      s[i + 4] as string,
      this.time(at),
    ];
  }
}

/** A compact record of one handled stimulus, for `SchedulerState.stimulusLog`. */
export interface StimulusRecord {
  /** The stimulus's ID. */
  readonly stimulusId: string;
  /** The event kind. */
  readonly kind:
    | "worker-message"
    | "client-message"
    | "remove-worker"
    | "steal-request"
    | "balance"
    | "reduce-replicas";
  /** The message op, for wrapped messages (`task-finished`, `update-graph`, …); else null. */
  readonly op: string | null;
  /** The worker or client it came from, or the worker it concerns. */
  readonly origin: string;
  /** The key it concerns, if one. */
  readonly key: string | null;
  /** When it was handled, by the state machine's clock (seconds). */
  readonly time: number;
}

/** The stimulus log: one {@link StimulusRecord} per handled stimulus. */
export class StimulusLog extends TimedFlatRing<StimulusRecord> {
  constructor(maxlen: number) {
    super(maxlen, 5);
  }

  /** Append a record, evicting the oldest when full. */
  push(
    stimulusId: string,
    kind: StimulusRecord["kind"],
    op: string | null,
    origin: string,
    key: string | null,
    time: number,
  ): void {
    const at = this.claim();
    if (at < 0) return;
    const s = this.slots(at);
    const i = this.slot(at);
    s[i] = stimulusId;
    s[i + 1] = kind;
    s[i + 2] = op;
    s[i + 3] = origin;
    s[i + 4] = key;
    this.setTime(at, time);
  }

  protected read(at: number): StimulusRecord {
    const s = this.slots(at);
    const i = this.slot(at);
    return {
      stimulusId: s[i] as string,
      kind: s[i + 1] as StimulusRecord["kind"],
      op: s[i + 2] as string | null,
      origin: s[i + 3] as string,
      key: s[i + 4] as string | null,
      time: this.time(at),
    };
  }
}
