import type { StateMachineEvent } from "../worker/state/events.ts";
import type { WorkerState } from "../worker/state/workerState.ts";

/** An event that refers to state the machine never had. */
export interface UnknownReference {
  /** In words, e.g. `ExecuteSuccessEvent of x, a task the machine never heard of`. */
  readonly reason: string;
  /** The tasks the event is about. */
  readonly keys: readonly string[];
}

/**
 * Whether `ev` refers to something that, in a replay that so far matches the dumped
 * log, can only have come from before the stimulus log: the end of an execution of
 * an unknown task, or the end of a transfer the machine never started. The seed
 * would raise on either (KeyError, AssertionError).
 */
export function unknownReference(ws: WorkerState, ev: StateMachineEvent): UnknownReference | null {
  switch (ev.cls) {
    case "ExecuteSuccessEvent":
    case "ExecuteFailureEvent":
    case "RescheduleEvent":
      if (ws.tasks.has(ev.key)) return null;
      return {
        reason: `${ev.cls} of ${ev.key}, a task the machine never heard of`,
        keys: [ev.key],
      };
    case "GatherDepSuccessEvent":
    case "GatherDepBusyEvent":
    case "GatherDepNetworkFailureEvent":
    case "GatherDepFailureEvent": {
      if (ws.inFlightWorkers.has(ev.worker)) return null;
      const keys = ev.cls === "GatherDepSuccessEvent" ? [...ev.data.keys()] : [];
      return {
        reason: `${ev.cls} from ${ev.worker}, a transfer the machine never started`,
        keys,
      };
    }
    default:
      return null;
  }
}
