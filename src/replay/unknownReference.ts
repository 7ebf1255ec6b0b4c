import type { StateMachineEvent } from "../worker/state/events.ts";
import type { WorkerState } from "../worker/state/workerState.ts";

/** An event that refers to state the machine never had. */
export interface UnknownReference {
  /** In words, e.g. `ExecuteSuccessEvent of x, a task the machine never heard of`. */
  readonly reason: string;
  /** The tasks the event is about. */
  readonly keys: readonly string[];
  /**
   * The machine accepts the event all the same (it ignores unknown keys): replay it,
   * but know that the stimulus log does not reach back to the worker's start.
   */
  readonly harmless: boolean;
}

/**
 * Whether `ev` refers to something that, in a replay that so far matches the dumped
 * log, can only have come from before the stimulus log: the end of an execution of
 * an unknown task, or of a task the replay does not run while it began before the
 * stimulus log (`tainted`) or the stimulus log is known not to reach back to the
 * worker's start (`headless`), or the end of a transfer the machine never started.
 * The seed would raise on any of them (KeyError, AssertionError).
 */
export function unknownReference(
  ws: WorkerState,
  ev: StateMachineEvent,
  tainted: (key: string) => boolean,
  headless: boolean,
  seen: (key: string) => boolean,
): UnknownReference | null {
  switch (ev.cls) {
    case "ExecuteSuccessEvent":
    case "ExecuteFailureEvent":
    case "RescheduleEvent": {
      const ts = ws.tasks.get(ev.key);
      if (ts === undefined) {
        return {
          reason: `${ev.cls} of ${ev.key}, a task the machine never heard of`,
          keys: [ev.key],
          harmless: false,
        };
      }
      if ((headless || tainted(ev.key)) && !ws.executing.has(ts) && !ws.longRunning.has(ts)) {
        return {
          reason: `${ev.cls} of ${ev.key}, which the replay does not run (the live worker ran it because of what came before the stimulus log)`,
          keys: [ev.key],
          harmless: false,
        };
      }
      return null;
    }
    case "GatherDepSuccessEvent":
    case "GatherDepBusyEvent":
    case "GatherDepNetworkFailureEvent":
    case "GatherDepFailureEvent": {
      if (ws.inFlightWorkers.has(ev.worker)) return null;
      const keys = ev.cls === "GatherDepSuccessEvent" ? [...ev.data.keys()] : [];
      return {
        reason: `${ev.cls} from ${ev.worker}, a transfer the machine never started`,
        keys,
        harmless: false,
      };
    }
    case "FreeKeysEvent":
    case "RemoveReplicasEvent": {
      // The scheduler names only keys it sent this worker: never seen, they came earlier.
      const keys = ev.keys.filter((k) => !seen(k) && !ws.tasks.has(k));
      if (keys.length === 0) return null;
      return {
        reason: `${ev.cls} of ${keys[0]}${keys.length > 1 ? ` and ${keys.length - 1} more` : ""}, never heard of`,
        keys,
        harmless: true,
      };
    }
    default:
      return null;
  }
}
