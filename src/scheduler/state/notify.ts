/**
 * Telling clients about a task that cannot run: `task-no-worker`.
 */

import { noWorkerReason } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";

/** How many dependents to search for the wanted keys a `no-worker` task holds up. */
const SEARCH_LIMIT = 1000;

/**
 * Tell the clients waiting for `ts`, which just went to `no-worker` although
 * workers are running, why none of them can run it: the clients wanting `ts` itself or, if none, those
 * wanting a task held up by it: a dependent, transitively, still to be
 * computed (not in memory, not erred), searched breadth-first, at most
 * {@link SEARCH_LIMIT} tasks.
 */
export function notifyNoWorker(s: SchedulerState, ts: TaskState): void {
  // With no running worker at all, every ready task lands here (a cluster
  // starting up, or paused): clients are not flooded, as in Dask. Only tasks
  // that the running workers cannot run, because of their restrictions, are told.
  if (s.clients.size === 0 || s.running.size === 0) return;
  const reason = noWorkerReason(s, ts);
  const stimulusId = s.stimulusId;
  if (ts.whoWants.size > 0) {
    s.sendToWhoWants(ts, { op: "task-no-worker", key: ts.key, task: ts.key, reason, stimulusId });
    return;
  }
  const seen = new Set<TaskState>([ts]);
  const queue: TaskState[] = [ts];
  for (let i = 0; i < queue.length && seen.size < SEARCH_LIMIT; i++) {
    for (const dts of queue[i].dependents) {
      if (seen.has(dts) || dts.state === "memory" || dts.state === "erred") continue;
      seen.add(dts);
      queue.push(dts);
      if (dts.whoWants.size > 0) {
        s.sendToWhoWants(dts, {
          op: "task-no-worker",
          key: dts.key,
          task: ts.key,
          reason,
          stimulusId,
        });
      }
    }
  }
}
