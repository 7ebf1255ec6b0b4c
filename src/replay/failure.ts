import { formatLogEntry } from "../worker/state/errors.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";
import type { WorkerState } from "../worker/state/workerState.ts";
import { eventKeys } from "./eventKeys.ts";
import type { ReplayFailure } from "./report.ts";

/** Most story records a failure report keeps (the latest). */
export const FAILURE_STORY_RECORDS = 40;

/**
 * What to report when the state machine raised on `ev`: the error and the story of
 * the event's tasks and stimulus (the records before the error; time dropped).
 */
export function replayFailure(
  ws: WorkerState,
  ev: StateMachineEvent,
  eventIndex: number,
  err: unknown,
): ReplayFailure {
  const story = ws
    .story(...eventKeys(ev), ev.stimulusId)
    .slice(-FAILURE_STORY_RECORDS)
    .map((r) => formatLogEntry(r.slice(0, -1)));
  return {
    eventIndex,
    eventClass: ev.cls,
    stimulusId: ev.stimulusId,
    error: err instanceof Error ? err.name : typeof err,
    message: err instanceof Error ? err.message : String(err),
    story,
  };
}
