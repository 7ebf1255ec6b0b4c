import type { StateMachineEvent } from "../events.ts";
import type { TaskState } from "../taskState.ts";
import type { WorkerState } from "../workerState.ts";

/*
 * What kinds of stimulus a stream holds: each stimulus named by its class and the state
 * of the task(s) it concerns. The fuzz driver counts them (FuzzResult.eventsAt), and
 * tools/oracle/coverage.ts compares vector sets by them.
 */

/** A task's state for counting: `absent`, the state, or e.g. `resumed(executing->fetch)`. */
export function stateLabel(ts: TaskState | undefined): string {
  if (ts === undefined) return "absent";
  if (ts.state === "cancelled" || ts.state === "resumed") {
    return `${ts.state}(${ts.previous}->${ts.next})`;
  }
  return ts.state;
}

/** The combinations `ev` makes with the state `ws` is in just before handling it. */
export function stimulusCombinations(ws: WorkerState, ev: StateMachineEvent): string[] {
  const at = (key: string) => stateLabel(ws.tasks.get(key));
  const out: string[] = [];
  const each = (role: string, keys: Iterable<string>) => {
    for (const k of keys) out.push(`${ev.cls}.${role} @ ${at(k)}`);
  };
  switch (ev.cls) {
    case "ComputeTaskEvent":
      out.push(`${ev.cls} @ ${at(ev.key)}`);
      each("dependency", ev.nbytes.keys());
      break;
    case "AcquireReplicasEvent":
    case "RefreshWhoHasEvent":
      out.push(ev.cls);
      each("key", ev.whoHas.keys());
      break;
    case "RemoveReplicasEvent":
    case "FreeKeysEvent":
      out.push(ev.cls);
      each("key", ev.keys);
      break;
    case "UpdateDataEvent":
      out.push(ev.cls);
      each("key", ev.data.keys());
      break;
    case "GatherDepSuccessEvent":
    case "GatherDepBusyEvent":
    case "GatherDepNetworkFailureEvent":
    case "GatherDepFailureEvent": {
      out.push(ev.cls);
      for (const k of ws.inFlightWorkers.get(ev.worker) ?? []) {
        const sent = ev.cls !== "GatherDepSuccessEvent" ? "" : ev.data.has(k) ? "+sent" : "-sent";
        out.push(`${ev.cls}.in-flight${sent} @ ${at(k)}`);
      }
      break;
    }
    default:
      out.push("key" in ev ? `${ev.cls} @ ${at(ev.key)}` : ev.cls);
  }
  return out;
}
