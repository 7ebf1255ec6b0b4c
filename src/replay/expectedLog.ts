import type { WorkerLogEntry } from "../protocol/clusterDump.ts";
import { type ComparableRecord, comparableRecord, isShellRecord } from "./records.ts";

/**
 * The records of a dumped worker log that its WorkerState wrote (the Worker's own
 * `request-dep`, `receive-dep`, … are left out), in order, with a cursor that a replay
 * advances stimulus by stimulus.
 */
export class ExpectedLog {
  /** The WorkerState's records, in the order they were logged. */
  readonly records: readonly ComparableRecord[];
  /** How many records of the Worker were left out. */
  readonly shellRecords: number;
  /** How many of the records are transitions. */
  readonly transitions: number;
  #cursor = 0;

  /** Reduces the dumped `log`. */
  constructor(log: readonly WorkerLogEntry[]) {
    const records: ComparableRecord[] = [];
    let shell = 0;
    let transitions = 0;
    for (const entry of log) {
      if (isShellRecord(entry)) {
        shell++;
        continue;
      }
      const r = comparableRecord(entry);
      if (r.isTransition) transitions++;
      records.push(r);
    }
    this.records = records;
    this.shellRecords = shell;
    this.transitions = transitions;
  }

  /** Index of the next record to compare. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Moves the cursor (used once, to skip records older than the stimulus log). */
  seek(index: number): void {
    this.#cursor = Math.max(0, Math.min(index, this.records.length));
  }

  /** The stimulus id of the record at the cursor, or null at the end. */
  peekStimulus(): string | null {
    const r = this.records[this.#cursor];
    return r === undefined ? null : r.stimulusId;
  }

  /**
   * Takes the run of records of `stimulusId` at the cursor (empty when the next is
   * another's), up to the first logged at or after `before` (a later stimulus of the
   * same id was handled then), if given.
   */
  take(stimulusId: string, before: number | null = null): ComparableRecord[] {
    const out: ComparableRecord[] = [];
    const records = this.records;
    while (this.#cursor < records.length && records[this.#cursor].stimulusId === stimulusId) {
      const time = records[this.#cursor].time;
      if (before !== null && time !== null && time >= before) break;
      out.push(records[this.#cursor++]);
    }
    return out;
  }
}
