import { setOwnKey } from "../../util/ownKey.ts";
import type { TaskState } from "../../worker/state/taskState.ts";
import type { WorkerState } from "../../worker/state/workerState.ts";
import type { Dict } from "./fields.ts";
import { sortedStrings } from "./instructions.ts";

function keys(tss: Iterable<TaskState>): string[] {
  const out: string[] = [];
  for (const ts of tss) out.push(ts.key);
  return sortedStrings(out);
}

function num(n: number | null): number | null {
  return n === null || !Number.isFinite(n) ? null : n;
}

function resources(m: ReadonlyMap<string, number>): Dict {
  const out: Dict = {};
  for (const k of sortedStrings(m.keys())) setOwnKey(out, k, num(m.get(k) as number));
  return out;
}

/** A task's part of the snapshot. */
export function taskSnapshot(ts: TaskState): Dict {
  return {
    state: ts.state,
    previous: ts.previous,
    next: ts.next,
    done: ts.done,
    priority: ts.priority === null ? null : [...ts.priority],
    run_id: ts.runId,
    nbytes: ts.nbytes,
    who_has: sortedStrings(ts.whoHas),
    dependencies: keys(ts.dependencies),
    dependents: keys(ts.dependents),
    waiting_for_data: keys(ts.waitingForData),
    waiters: keys(ts.waiters),
    coming_from: ts.comingFrom,
    resource_restrictions: resources(ts.resourceRestrictions),
    exception_text: ts.exceptionText,
  };
}

function workerKeys(m: ReadonlyMap<string, ReadonlySet<string>>, omitEmpty: boolean): Dict {
  const out: Dict = {};
  for (const w of sortedStrings(m.keys())) {
    const ks = m.get(w) as ReadonlySet<string>;
    if (omitEmpty && ks.size === 0) continue;
    setOwnKey(out, w, sortedStrings(ks));
  }
  return out;
}

/**
 * The full state of a worker state machine in the conformance vectors' form
 * (`../shared/conformance/FORMAT.md`): everything sorted, so it is deterministic.
 */
export function stateSnapshot(ws: WorkerState): Dict {
  const tasks: Dict = {};
  for (const k of sortedStrings(ws.tasks.keys()))
    setOwnKey(tasks, k, taskSnapshot(ws.tasks.get(k) as TaskState));
  const dataNeeded: Dict = {};
  for (const w of sortedStrings(ws.dataNeeded.keys())) {
    const heap = ws.dataNeeded.get(w);
    if (heap === undefined || heap.size === 0) continue;
    setOwnKey(dataNeeded, w, keys(heap));
  }
  return {
    tasks,
    ready: ws.ready.sorted().map((ts) => ts.key),
    constrained: ws.constrained.sorted().map((ts) => ts.key),
    waiting: keys(ws.waiting),
    executing: keys(ws.executing),
    long_running: keys(ws.longRunning),
    in_flight_tasks: keys(ws.inFlightTasks),
    in_flight_workers: workerKeys(ws.inFlightWorkers, false),
    missing_dep_flight: keys(ws.missingDepFlight),
    busy_workers: sortedStrings(ws.busyWorkers),
    data_needed: dataNeeded,
    has_what: workerKeys(ws.hasWhat, true),
    data: sortedStrings(ws.data.keys()),
    actors: sortedStrings(ws.actors.keys()),
    fetch_count: ws.fetchCount,
    transfer_incoming_bytes: ws.transferIncomingBytes,
    transfer_incoming_count_total: ws.transferIncomingCountTotal,
    nbytes: ws.nbytes,
    executed_count: ws.executedCount,
    generation: ws.generation,
    running: ws.running,
    available_resources: resources(ws.availableResources),
    transition_counter: ws.transitionCounter,
  };
}
