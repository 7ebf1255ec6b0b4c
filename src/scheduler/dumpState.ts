/**
 * The scheduler as Dask's `Scheduler._to_dict` writes it into a cluster dump
 * (`Client.dump_cluster_state`, `weft dump`): its transition log (Dask's
 * tuples), its workers and tasks, with references to other tasks and workers
 * as their reprs, as Dask's `recursive_to_dict` leaves them. The client adds
 * every worker's own dump (`src/worker/dumpState.ts`).
 */

import { setImmediate as nextTurn } from "node:timers/promises";
import {
  encodedPart,
  LOG_ENTRIES_PER_PART,
  type SchedulerDumpParts,
  TASKS_PER_PART,
} from "../protocol/clusterDump/schedulerParts.ts";
import type { SchedulerState } from "./state/schedulerState.ts";
import type { TransitionLogEntry } from "./state/story.ts";
import type { TaskState } from "./state/taskState.ts";
import type { WorkerInfo } from "./state/workerInfo.ts";

function taskDict(ts: TaskState): Record<string, unknown> {
  return {
    key: ts.key,
    state: ts.state,
    priority: ts.priority === null ? null : [...ts.priority],
    dependencies: [...ts.dependencies].map(String),
    dependents: [...ts.dependents].map(String),
    waiting_on: [...ts.waitingOn].map(String),
    waiters: [...ts.waiters].map(String),
    who_wants: [...ts.whoWants].map(String),
    who_has: [...ts.whoHas].map(String),
    processing_on: ts.processingOn === null ? null : String(ts.processingOn),
    nbytes: ts.nbytes,
    type: ts.typename,
    exception_text: ts.exceptionText,
    traceback_text: ts.tracebackText,
    exception_blame: ts.exceptionBlame === null ? null : String(ts.exceptionBlame),
    suspicious: ts.suspicious,
    retries: ts.retries,
    actor: ts.actor,
  };
}

function workerDict(ws: WorkerInfo): Record<string, unknown> {
  return {
    address: ws.address,
    // Dask's default name is the address.
    name: ws.name ?? ws.address,
    nthreads: ws.nthreads,
    memory_limit: ws.memoryLimit,
    resources: { ...ws.resources },
    used_resources: { ...ws.usedResources },
    status: `<Status.${ws.status}: '${ws.status}'>`,
    nbytes: ws.nbytes,
    processing: Object.fromEntries([...ws.processing].map(([ts, cost]) => [String(ts), cost])),
    long_running: [...ws.longRunning].map(String),
    has_what: [...ws.hasWhat].map(String),
    actors: [...ws.actors].map(String),
  };
}

/** A transition log record as Dask's tuple: `[key, start, finish, {key: state}, stimulus_id, time]`. */
export function dumpedLogEntry(entry: TransitionLogEntry): unknown[] {
  const [key, start, finish, recs, stimulusId, time] = entry;
  const recommendations: Record<string, string> = {};
  for (let i = 0; i < recs.length; i += 2) recommendations[recs[i]] = recs[i + 1];
  return [key, start, finish, recommendations, stimulusId, time];
}

/** The scheduler's dict in a cluster dump; `status` is the server's. */
export function schedulerDumpDict(
  s: SchedulerState,
  o: { readonly address: string; readonly status: string },
): Record<string, unknown> {
  const tasks: Record<string, unknown> = {};
  for (const [key, ts] of s.tasks) tasks[key] = taskDict(ts);
  return schedulerDictWith(s, o, tasks, s.log.toArray().map(dumpedLogEntry));
}

/**
 * The scheduler's dict in a cluster dump as `dump-state` answers it
 * (`schedulerParts.ts`): its tasks and transition log, the bulk of it, read
 * and encoded a part at a time, a turn of the event loop each, so that the
 * scheduler goes on serving between two. The tasks there are and the log are
 * taken at once; each task is read as its part is, so a dump taken as the
 * cluster works may show two tasks as they were some milliseconds apart, as
 * the workers' dumps, asked one after another, already are.
 */
export async function schedulerDumpInParts(
  s: SchedulerState,
  o: { readonly address: string; readonly status: string },
): Promise<SchedulerDumpParts> {
  const scheduler = schedulerDictWith(s, o, {}, []);
  const tasks = [...s.tasks.values()];
  const log = s.log.toArray();
  const taskParts: Uint8Array[] = [];
  for (let i = 0; i < tasks.length; i += TASKS_PER_PART) {
    await nextTurn();
    const part: Record<string, unknown> = {};
    for (const ts of tasks.slice(i, i + TASKS_PER_PART)) part[ts.key] = taskDict(ts);
    taskParts.push(encodedPart(part));
  }
  const logParts: Uint8Array[] = [];
  for (let i = 0; i < log.length; i += LOG_ENTRIES_PER_PART) {
    await nextTurn();
    logParts.push(encodedPart(log.slice(i, i + LOG_ENTRIES_PER_PART).map(dumpedLogEntry)));
  }
  return { scheduler, tasks: taskParts, transitionLog: logParts };
}

function schedulerDictWith(
  s: SchedulerState,
  o: { readonly address: string; readonly status: string },
  tasks: Record<string, unknown>,
  transitionLog: unknown[],
): Record<string, unknown> {
  const workers: Record<string, unknown> = {};
  for (const [address, ws] of s.workers) workers[address] = workerDict(ws);
  const clients: Record<string, unknown> = {};
  for (const [id, cs] of s.clients) {
    clients[id] = { client_key: id, wants_what: [...cs.wantsWhat].map(String) };
  }
  return {
    type: "Scheduler",
    id: null,
    address: o.address,
    services: {},
    workers,
    status: `<Status.${o.status}: '${o.status}'>`,
    thread_id: null,
    transition_log: transitionLog,
    transition_counter: s.transitionCounter,
    tasks,
    task_groups: {},
    clients,
    memory: {},
    events: {},
    extensions: {},
  };
}
