/**
 * A run of consecutive events of the stimulus log that share a stimulus id (a Worker
 * may hand several events of one message to its state machine, e.g. three
 * `task-finished-…`). The dumped log tells their records apart only by that id, so a
 * replay checks them together.
 */
export interface EventGroup {
  /** The shared stimulus id. */
  readonly stimulusId: string;
  /** Index of the first event in the stimulus log. */
  readonly first: number;
  /** Index after the last event. */
  readonly end: number;
}

/** Splits a stimulus log into runs of equal stimulus ids. */
export function eventGroups(events: readonly { readonly stimulus_id: string }[]): EventGroup[] {
  const out: EventGroup[] = [];
  let first = 0;
  for (let i = 1; i <= events.length; i++) {
    if (i === events.length || events[i].stimulus_id !== events[first].stimulus_id) {
      if (i > first) out.push({ stimulusId: events[first].stimulus_id, first, end: i });
      first = i;
    }
  }
  return out;
}
