/**
 * Telling clients about a task that cannot run (`task-no-worker`), and about
 * the end of that (`task-runnable`).
 */

import type { ClientInfo } from "./clientInfo.ts";
import { noWorkerReason } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf } from "./sets.ts";
import type { TaskState } from "./taskState.ts";

/** How many dependents to search for the wanted keys a `no-worker` task holds up. */
const SEARCH_LIMIT = 1000;

/**
 * Tell the clients waiting for `ts`, which just went to `no-worker` although
 * workers are running, why none of them can run it: the clients wanting `ts`
 * itself and those wanting a task held up by it, a dependent, transitively,
 * still to be computed (not in memory, not erred), searched breadth-first, at
 * most {@link SEARCH_LIMIT} tasks.
 */
export function notifyNoWorker(s: SchedulerState, ts: TaskState): void {
  // With no running worker at all, every ready task lands here (a cluster
  // starting up, or paused): clients are not flooded, as in Dask. Only tasks
  // that the running workers cannot run, because of their restrictions, are told.
  if (s.clients.size === 0 || s.running.size === 0) return;
  const reason = noWorkerReason(s, ts);
  const stimulusId = s.stimulusId;
  for (const wanted of wantedHeldUpBy(ts)) {
    told(ts, wanted);
    s.sendToWhoWants(wanted, {
      op: "task-no-worker",
      key: wanted.key,
      task: ts.key,
      reason,
      stimulusId,
    });
  }
}

/**
 * `ts` left `no-worker` (to `processing` or `released`): tell the clients that
 * were told it held up keys they want. A key still held up by another task in
 * `no-worker` is told about that one instead.
 */
export function notifyLeftNoWorker(s: SchedulerState, ts: TaskState): void {
  const toldOf = ts.noWorkerTold;
  if (toldOf === null) return;
  ts.noWorkerTold = null;
  const stimulusId = s.stimulusId;
  for (const wanted of toldOf) {
    // Released by its clients (or forgotten) since, or done: nothing to say.
    if (wanted.whoWants.size === 0 || wanted.state === "memory" || wanted.state === "erred") {
      continue;
    }
    const blocker = s.unrunnable.size === 0 ? null : unrunnableInput(wanted);
    if (blocker === null) {
      s.sendToWhoWants(wanted, { op: "task-runnable", key: wanted.key, task: ts.key, stimulusId });
    } else {
      told(blocker, wanted);
      s.sendToWhoWants(wanted, {
        op: "task-no-worker",
        key: wanted.key,
        task: blocker.key,
        reason: noWorkerReason(s, blocker),
        stimulusId,
      });
    }
  }
}

/**
 * Remember that the clients of `wanted` were told that `blocker` holds it up.
 * Tasks nobody wants any more are dropped whenever the set doubles, so that a
 * task that stays in `no-worker` does not keep every task released meanwhile.
 */
function told(blocker: TaskState, wanted: TaskState): void {
  const set = (blocker.noWorkerTold ??= new Set());
  const size = set.size;
  if (size >= 64 && (size & (size - 1)) === 0) {
    for (const t of set) if (t.whoWants.size === 0) set.delete(t);
  }
  set.add(wanted);
}

/**
 * The wanted tasks `ts` holds up: itself and its dependents, transitively,
 * still to be computed (not in memory, not erred), searched breadth-first, at
 * most {@link SEARCH_LIMIT} tasks.
 */
function wantedHeldUpBy(ts: TaskState): TaskState[] {
  const wanted: TaskState[] = ts.whoWants.size > 0 ? [ts] : [];
  const seen = new Set<TaskState>([ts]);
  const queue: TaskState[] = [ts];
  for (let i = 0; i < queue.length && seen.size < SEARCH_LIMIT; i++) {
    for (const dts of queue[i].dependents) {
      if (seen.has(dts) || dts.state === "memory" || dts.state === "erred") continue;
      seen.add(dts);
      queue.push(dts);
      if (dts.whoWants.size > 0) wanted.push(dts);
      // The limit counts every task seen, not only those whose dependents were looked at.
      if (seen.size >= SEARCH_LIMIT) return wanted;
    }
  }
  return wanted;
}

/**
 * Tell `cs`, which has just asked for `keys`, about those of them that are
 * held up by a task already in `no-worker`: the task itself or a dependency,
 * transitively (at most {@link SEARCH_LIMIT} tasks searched a key). That task
 * was announced when it became unrunnable, before these keys were wanted.
 */
export function notifyHeldUpWanted(
  s: SchedulerState,
  cs: ClientInfo,
  keys: readonly string[],
): void {
  if (s.unrunnable.size === 0 || s.running.size === 0) return;
  for (const key of keys) {
    const ts = s.tasks.get(key);
    if (ts === undefined || ts.state === "memory" || ts.state === "erred") continue;
    const blocker = unrunnableInput(ts);
    if (blocker === null) continue;
    told(blocker, ts);
    s.sendToClient(cs, {
      op: "task-no-worker",
      key,
      task: blocker.key,
      reason: noWorkerReason(s, blocker),
      stimulusId: s.stimulusId,
    });
  }
}

/**
 * `ts` if it is in `no-worker`, else a dependency (transitively) that is, or
 * null; at most {@link SEARCH_LIMIT} tasks searched. Each task is checked as it
 * is found: a key of a thousand inputs and more, one of them in `no-worker`,
 * was searched past the limit before the input was looked at, and said runnable.
 */
function unrunnableInput(ts: TaskState): TaskState | null {
  if (ts.state === "no-worker") return ts;
  const seen = new Set<TaskState>([ts]);
  const queue: TaskState[] = [ts];
  for (let i = 0; i < queue.length; i++) {
    for (const dts of itemsOf(queue[i].dependencies)) {
      if (seen.has(dts) || dts.state === "memory") continue;
      if (dts.state === "no-worker") return dts;
      seen.add(dts);
      if (seen.size >= SEARCH_LIMIT) return null;
      queue.push(dts);
    }
  }
  return null;
}
