import { compareRecords } from "./logComparison.ts";
import type { ComparableRecord } from "./records.ts";
import type { LogDivergence } from "./report.ts";

/** One replayed stimulus, as the checker needs it. */
export interface CheckedStimulus {
  readonly stimulusId: string;
  /** The dumped records of that stimulus. */
  readonly expected: readonly ComparableRecord[];
  /** The replayed records. */
  readonly replayed: readonly ComparableRecord[];
  /** The event (index and class) that wrote the replayed record at a position. */
  readonly eventAt: (recordIndex: number) => { index: number; cls: string };
  /**
   * The stimulus log does not reach back to the worker's start: different records may
   * come from state the replay never had, so they are counted as unverifiable.
   */
  readonly headless: boolean;
}

/** Tallies the comparison of replayed and dumped records, stimulus by stimulus. */
export class LogChecker {
  checkedStimuli = 0;
  checkedRecords = 0;
  equal = 0;
  reordered = 0;
  divergent = 0;
  firstReordering: LogDivergence | null = null;
  firstDivergence: LogDivergence | null = null;
  unverifiable = 0;
  firstUnverifiable: LogDivergence | null = null;

  /**
   * Checks one stimulus; returns the difference when its records differ (not only in
   * order): a divergence, or with `headless` an unverifiable stimulus.
   */
  check(s: CheckedStimulus): LogDivergence | null {
    this.checkedStimuli++;
    this.checkedRecords += s.expected.length;
    const { verdict, difference } = compareRecords(s.expected, s.replayed);
    if (verdict === "equal" || difference === null) {
      this.equal++;
      return null;
    }
    const event = s.eventAt(
      difference.replayed === null ? s.replayed.length - 1 : difference.index,
    );
    const found: LogDivergence = {
      eventIndex: event.index,
      eventClass: event.cls,
      stimulusId: s.stimulusId,
      recordIndex: difference.index,
      expected: difference.expected?.display ?? null,
      replayed: difference.replayed?.display ?? null,
      missing: difference.missing,
      extra: difference.extra,
    };
    if (verdict === "reordered") {
      this.reordered++;
      this.firstReordering ??= found;
      return null;
    }
    if (s.headless) {
      this.unverifiable++;
      this.firstUnverifiable ??= found;
    } else {
      this.divergent++;
      this.firstDivergence ??= found;
    }
    return found;
  }
}
