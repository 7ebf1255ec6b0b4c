import type { WorkerDump } from "../protocol/clusterDump.ts";
import type { EventGroup } from "./eventGroups.ts";
import type { ExpectedLog } from "./expectedLog.ts";

/** Capacity of the seed's `stimulus_log` deque. */
export const STIMULUS_LOG_CAPACITY = 10_000;
/** Capacity of the seed's `log` deque. */
export const LOG_CAPACITY = 100_000;

/**
 * How far back a dumped worker's logs reach, and where checking the replay against
 * the log can start. Both logs are capped deques: on a long-lived worker they lose
 * their beginning, and then neither the transition counter nor the tasks that existed
 * before can be rebuilt.
 */
export interface LogCoverage {
  /** The stimulus log is at its capacity: it may have lost older events. */
  readonly stimulusLogFull: boolean;
  /** The log lost records: it is full, or it holds fewer transitions than the counter. */
  readonly logCapped: boolean;
  /** Records at the start of the log that belong to stimuli older than the stimulus log. */
  readonly recordsBefore: number;
  /** The tasks those older records name (their history began before the stimulus log). */
  readonly keysBefore: ReadonlySet<string>;
  /** The first event group the log covers (the ones before are replayed, not checked). */
  readonly firstCheckedGroup: number;
  /** The log starts inside the records of that group: only their tail is there. */
  readonly firstGroupPartial: boolean;
  /** What was found, in words. */
  readonly notes: readonly string[];
}

/** The `handled` time of a group's events (Dask stamps all events of one call alike). */
function handledAt(w: WorkerDump, g: EventGroup): number | null {
  return w.stimulusLog[g.first].handled;
}

/**
 * Index of the first dumped record written while handling the stimulus log's first
 * event, or -1. By time when the events have their `handled` time (every record of
 * an event is logged at or after it, every record of an earlier event before it;
 * stimulus ids alone can mislead, as the Worker reuses them), else by stimulus id.
 */
function firstRecordOfStimulusLog(
  w: WorkerDump,
  expected: ExpectedLog,
  groups: readonly EventGroup[],
): number {
  const records = expected.records;
  if (groups.length === 0) return -1;
  const handled = handledAt(w, groups[0]);
  if (handled !== null) {
    const i = records.findIndex((r) => r.time !== null && r.time >= handled);
    if (i >= 0) return i;
  }
  const groupIds = new Set(groups.map((g) => g.stimulusId));
  return records.findIndex((r) => groupIds.has(r.stimulusId));
}

/** The group that wrote the first dumped record (of a log that lost its beginning). */
function groupOfFirstRecord(
  w: WorkerDump,
  expected: ExpectedLog,
  groups: readonly EventGroup[],
): number {
  const first = expected.records[0];
  if (first.time !== null && handledAt(w, groups[0]) !== null) {
    let found = 0;
    for (let g = 0; g < groups.length; g++) {
      const t = handledAt(w, groups[g]);
      if (t !== null && t <= first.time) found = g;
    }
    return found;
  }
  const g = groups.findIndex((x) => x.stimulusId === first.stimulusId);
  return g < 0 ? groups.length : g;
}

/** Finds where `expected` (the dumped log) and the stimulus log's `groups` meet. */
export function logCoverage(
  w: WorkerDump,
  expected: ExpectedLog,
  groups: readonly EventGroup[],
): LogCoverage {
  const notes: string[] = [];
  const records = expected.records;
  const stimulusLogFull = w.stimulusLogFull || w.stimulusLog.length >= STIMULUS_LOG_CAPACITY;
  const logCapped =
    w.logFull || w.log.length >= LOG_CAPACITY || w.transitionCounter > expected.transitions;
  if (stimulusLogFull) {
    notes.push(
      `the stimulus log is full (${w.stimulusLog.length} events): older events may have been dropped`,
    );
  }
  if (w.transitionCounter > expected.transitions) {
    notes.push(
      `the dumped transition counter (${w.transitionCounter}) is larger than the ${expected.transitions} transitions the log holds: the log does not reach back to the worker's start`,
    );
  } else if (logCapped) {
    notes.push(`the log is full (${w.log.length} records): older records may have been dropped`);
  }

  const q = firstRecordOfStimulusLog(w, expected, groups);
  const keysBefore = new Set<string>();
  if (q === -1) {
    // Events but no record of them: checking would call every stimulus divergent.
    if (records.length > 0) {
      notes.push("the log holds no record of the stimulus log's events: nothing can be checked");
    } else if (groups.length > 0) {
      notes.push(
        w.log.length === 0
          ? "the log is empty: nothing can be checked"
          : "the log holds only the Worker's own records (request-dep, …): nothing can be checked",
      );
    }
    return {
      stimulusLogFull,
      logCapped,
      recordsBefore: records.length,
      keysBefore,
      firstCheckedGroup: groups.length,
      firstGroupPartial: false,
      notes,
    };
  }
  for (let i = 0; i < q; i++) for (const k of records[i].keys) keysBefore.add(k);
  const olderStimuli = new Set(records.slice(0, q).map((r) => r.stimulusId)).size;
  if (q > 0) {
    notes.push(
      `the log begins with ${q} records of ${olderStimuli} stimuli older than the stimulus log: the stimulus log does not reach back to the worker's start`,
    );
  }
  let firstCheckedGroup = 0;
  let firstGroupPartial = false;
  if (logCapped && q === 0) {
    const sid = records[0].stimulusId;
    firstCheckedGroup = groupOfFirstRecord(w, expected, groups);
    firstGroupPartial = true;
    if (firstCheckedGroup > 0) {
      notes.push(
        `the log starts at event ${groups[firstCheckedGroup].first} (${sid}): the events before it are replayed but not checked`,
      );
    }
  }
  return {
    stimulusLogFull,
    logCapped,
    recordsBefore: q,
    keysBefore,
    firstCheckedGroup,
    firstGroupPartial,
    notes,
  };
}
