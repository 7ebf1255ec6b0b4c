/**
 * `update-data` (Dask's `Scheduler.update_data`): a client put values on
 * workers itself (`scatter`), and the scheduler records each as a task in
 * memory without a run spec, wanted by that client.
 */

import type { UpdateDataMsg } from "../../protocol/messagesClient.ts";
import { addReplica, isInvolved } from "./bookkeeping.ts";
import { clientDesiresKeys } from "./clientHandlers.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { NO_RECS } from "./story.ts";
import { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Record the scattered keys, then answer `data-updated`. Unlike Dask, which
 * puts any key in memory whatever its task was doing, a key the scheduler
 * already has is rejected: two values under one name would be fetched
 * interchangeably. Its copies are freed on the workers where the task has no
 * business (on the others, the value may already have replaced the task's).
 * A worker that left since it took the value is dropped
 * from the key's holders (the value went with it); a key left without holders
 * is rejected too. A key put on several workers keeps that many replicas
 * ({@link TaskState.replicasWanted}), a worker named twice counting once.
 */
export function updateData(s: SchedulerState, msg: UpdateDataMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const accepted: string[] = [];
  const rejected: { key: string; reason: string; workersGone: boolean }[] = [];
  for (const entry of msg.keys) {
    const { key } = entry;
    const known = s.tasks.get(key);
    if (known !== undefined) {
      rejected.push({
        key,
        reason: `the scheduler already has a task '${key}' (${known.state})`,
        workersGone: false,
      });
      // Free the copies this scatter made, where the task has no business.
      for (const address of new Set(entry.workers)) {
        const ws = s.workers.get(address);
        if (ws !== undefined && !isInvolved(known, ws)) s.freeKeys(ws, key);
      }
      continue;
    }
    // Each worker once: a worker named twice holds one replica.
    const holders = new Set<WorkerInfo>();
    for (const address of entry.workers) {
      const ws = s.workers.get(address);
      if (ws !== undefined) holders.add(ws);
    }
    if (holders.size === 0) {
      rejected.push({
        key,
        reason: `none of its workers is connected any more (${entry.workers.join(", ")})`,
        workersGone: true,
      });
      continue;
    }
    const ts = new TaskState(key, null, s.taskGroupOf(key));
    ts.nbytes = entry.nbytes;
    ts.typename = entry.typename;
    ts.state = "memory";
    ts.everDone = true; // done as far as progress goes
    s.tasksDone++;
    s.tasks.set(key, ts);
    for (const ws of holders) addReplica(s, ts, ws);
    // A value the client put on several workers itself (`scatter` with `broadcast`)
    // stays on as many: the Active Memory Manager keeps them, as it keeps
    // `replicate`'s (Dask's broadcast goes through `replicate`, which its AMM undoes).
    if (holders.size > 1) ts.replicasWanted = holders.size; // on any workers
    // Not a transition Dask logs, but the key's story starts here.
    s.log.push(key, "released", "memory", NO_RECS, s.stimulusId, s.now);
    s.touch(ts);
    accepted.push(key);
  }
  clientDesiresKeys(s, cs, accepted);
  s.sendToClient(cs, { op: "data-updated", rejected, stimulusId: s.stimulusId });
}
