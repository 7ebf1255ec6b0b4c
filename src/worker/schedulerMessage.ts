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

/**
 * The message for `inst`, one of the instructions the state machine returned for
 * `stims`. Only a `task-erred` looks at them (rare: no work for the others).
 */
export function schedulerMessage(
  inst: SendMessageToScheduler,
  stims: readonly StateMachineEvent[],
): Record<string, unknown> {
  const msg = toMessage(inst);
  if (inst.cls === "TaskErredMsg" && stims.some((s) => isFetchFailure(s, inst.stimulusId))) {
    msg.fetchFailed = true;
  }
  return msg;
}

function isFetchFailure(stim: StateMachineEvent, stimulusId: string): boolean {
  return stim.cls === "GatherDepFailureEvent" && stim.stimulusId === stimulusId;
}
