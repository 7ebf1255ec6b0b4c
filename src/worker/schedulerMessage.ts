/**
 * What a worker shell sends the scheduler for its state machine's messages:
 * their wire form (`toMessage`), and on a `task-erred` whose stimulus was a
 * failed fetch, `fetchFailed: true`.
 *
 * The state machine's `TaskErredMsg` carries the run id of the worker's own task
 * state, so the scheduler cannot tell a key the worker failed to fetch (whose
 * tasks there would wait forever, dask/distributed#7060) from a late failure of
 * an old run of it. The shell knows which stimulus it handled: it says so.
 */

import type { StateMachineEvent } from "./state/events.ts";
import { type SendMessageToScheduler, toMessage } from "./state/instructions.ts";

/** The stimulus ids of the failed fetches among `stims`, or null when there is none. */
export function fetchFailureStimuli(
  stims: readonly StateMachineEvent[],
): ReadonlySet<string> | null {
  let ids: Set<string> | null = null;
  for (const stim of stims) {
    if (stim.cls === "GatherDepFailureEvent") (ids ??= new Set()).add(stim.stimulusId);
  }
  return ids;
}

/**
 * The message for `inst`, one of the instructions the state machine returned for
 * stimuli whose failed fetches are `fetchFailures` ({@link fetchFailureStimuli}).
 */
export function schedulerMessage(
  inst: SendMessageToScheduler,
  fetchFailures: ReadonlySet<string> | null,
): Record<string, unknown> {
  const msg = toMessage(inst);
  if (fetchFailures !== null && inst.cls === "TaskErredMsg" && fetchFailures.has(inst.stimulusId)) {
    msg.fetchFailed = true;
  }
  return msg;
}
