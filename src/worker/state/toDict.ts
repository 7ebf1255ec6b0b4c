import { eventToDict } from "../../protocol/daskJson/events.ts";
import type { StateMachineEvent } from "./events.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerState } from "./workerState.ts";

/** A plain, JSON-friendly value for debugging output. */
export type DebugValue =
  | null
  | boolean
  | number
  | string
  | DebugValue[]
  | { [key: string]: DebugValue };

/** `v` as plain JSON-friendly values: sets and maps as arrays and objects, `toJSON` applied. */
export function debugValue(v: unknown, depth = 0): DebugValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "bigint") return v.toString();
  if (depth > 4) return String(v);
  if (Array.isArray(v)) return v.map((x) => debugValue(x, depth + 1));
  if (v instanceof Set) return [...v].map((x) => debugValue(x, depth + 1));
  if (v instanceof Map) {
    const out: { [key: string]: DebugValue } = {};
    for (const [k, x] of v) out[String(k)] = debugValue(x, depth + 1);
    return out;
  }
  if (typeof v === "object") {
    const toJSON = (v as { toJSON?: () => unknown }).toJSON;
    if (typeof toJSON === "function") return debugValue(toJSON.call(v), depth + 1);
    if ((v as { constructor?: unknown }).constructor === Object) {
      const out: { [key: string]: DebugValue } = {};
      for (const [k, x] of Object.entries(v)) out[k] = debugValue(x, depth + 1);
      return out;
    }
  }
  return String(v);
}

/**
 * A task as the seed's `TaskState._to_dict_no_nest`: related tasks by their repr, and
 * None, empty containers and the prefix left out. For debugging; not a round trip.
 */
export function taskToDict(ts: TaskState): { [key: string]: DebugValue } {
  const full: { [key: string]: DebugValue } = {
    key: ts.key,
    run_id: ts.runId,
    dependencies: [...ts.dependencies].map(String),
    dependents: [...ts.dependents].map(String),
    waiting_for_data: [...ts.waitingForData].map(String),
    waiters: [...ts.waiters].map(String),
    state: ts.state,
    previous: ts.previous,
    next: ts.next,
    duration: ts.duration,
    priority: ts.priority === null ? null : [...ts.priority],
    who_has: [...ts.whoHas],
    coming_from: ts.comingFrom,
    resource_restrictions: debugValue(ts.resourceRestrictions),
    exception_text: ts.exceptionText,
    traceback_text: ts.tracebackText,
    type: ts.type,
    suspicious_count: ts.suspiciousCount,
    startstops: debugValue(ts.startstops),
    start_time: ts.startTime,
    stop_time: ts.stopTime,
    metadata: debugValue(ts.metadata),
    nbytes: ts.nbytes,
    annotations: debugValue(ts.annotations),
    span_id: ts.spanId,
    done: ts.done,
  };
  const out: { [key: string]: DebugValue } = {};
  for (const [k, v] of Object.entries(full)) {
    if (v === null || v === false || v === 0 || v === "") continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  // run_id -1 and the key are kept even when "falsy" in the seed's sense.
  out.key = ts.key;
  return out;
}

/**
 * The worker state as the seed's `WorkerState._to_dict` gives it, for debugging and
 * cluster dumps: the collections by key, the logs, every task, the stimulus log's
 * events in Dask's dict form (`cls`, the seed's field names, `handled`), and the task
 * counts. Not type stable and not intended for round trips. `exclude` drops fields
 * of those names at the top, of every task and of every event, as the seed's
 * `recursive_to_dict` passes it down.
 */
export function workerStateToDict(
  ws: WorkerState,
  exclude: readonly string[] = [],
): { [key: string]: DebugValue } {
  const keys = (tss: Iterable<TaskState>) => [...tss].map((ts) => ts.key);
  const dataNeeded: { [key: string]: DebugValue } = {};
  for (const [w, tss] of ws.dataNeeded) dataNeeded[w] = tss.sorted().map((ts) => ts.key);
  const tasks: { [key: string]: DebugValue } = {};
  for (const [k, ts] of ws.tasks) tasks[k] = without(taskToDict(ts), exclude);
  const counts: { [key: string]: DebugValue } = {};
  for (const { prefix, state, value } of ws.taskCounter.currentCount()) {
    counts[`('${prefix}', '${state}')`] = value;
  }
  const elapsed: { [key: string]: DebugValue } = {};
  for (const { prefix, state, value } of ws.taskCounter.cumulativeElapsed()) {
    elapsed[`('${prefix}', '${state}')`] = value;
  }
  let address: string | null = null;
  try {
    address = ws.address;
  } catch {
    address = null;
  }
  const info: { [key: string]: DebugValue } = {
    address,
    nthreads: ws.nthreads,
    running: ws.running,
    ready: ws.ready.sorted().map((ts) => ts.key),
    constrained: ws.constrained.sorted().map((ts) => ts.key),
    data: Object.fromEntries([...ws.data.keys()].map((k) => [k, null])),
    data_needed: dataNeeded,
    executing: keys(ws.executing),
    has_what: debugValue(ws.hasWhat),
    long_running: keys(ws.longRunning),
    in_flight_tasks: keys(ws.inFlightTasks),
    in_flight_workers: debugValue(ws.inFlightWorkers),
    missing_dep_flight: keys(ws.missingDepFlight),
    busy_workers: [...ws.busyWorkers],
    log: ws.log.toArray().map((entry) => debugValue(entry)),
    stimulus_log: ws.stimulusLog.toArray().map((ev) => without(eventDict(ev), exclude)),
    transition_counter: ws.transitionCounter,
    tasks,
    task_counts: counts,
    task_cumulative_elapsed: elapsed,
  };
  return without(info, exclude);
}

/** An event of the stimulus log as the seed's `StateMachineEvent._to_dict` gives it. */
function eventDict(ev: StateMachineEvent): { [key: string]: DebugValue } {
  return debugValue({ ...eventToDict(ev), handled: ev.handled ?? null }) as {
    [key: string]: DebugValue;
  };
}

function without(
  d: { [key: string]: DebugValue },
  exclude: readonly string[],
): { [key: string]: DebugValue } {
  for (const k of exclude) delete d[k];
  return d;
}
