/**
 * `restart` (Dask's `Scheduler.restart`): the cluster starts afresh. Every
 * client lets go of every key it wants, and is told so with `cancelled-keys`;
 * published datasets and `fire-and-forget` keys go too, so every task is
 * forgotten while the workers are still there to be told to free it. Then
 * every worker is told to close (`close-worker` with `restart`) and removed,
 * and retirements under way end. A worker whose nanny starts another in its
 * place registers anew; the requesting client is answered `restarted` with
 * the workers there were and those with a nanny, and waits for them itself.
 *
 * Dask also forgets what it learnt of task durations; they are kept here, as
 * a restart does not change how long a function takes.
 *
 * `restart-workers` (Dask's `restart_workers`) restarts some workers only, the
 * tasks going on: each named worker with a nanny is told to close (`close-worker`
 * with `restart`) and removed as one that left on purpose, so that its
 * unfinished tasks are rescheduled and the results only it held are computed
 * again, without counting against them.
 */

import type { RestartMsg, RestartWorkersMsg } from "../../protocol/messagesClient.ts";
import { clientReleasesKeys } from "./clientHandlers.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { namedWorkers } from "./placement.ts";
import { abandonRetirements, isRetiring } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { removeWorker } from "./workerLifecycle.ts";

/** What clients are told of the keys they lose. */
export const RESTART_REASON = "the cluster restarted";

/** Handle `restart`: see the module's comment. */
export function restart(s: SchedulerState, msg: RestartMsg): void {
  const requester = s.ensureClient(msg.clientId);
  const lost: [ClientInfo, string[]][] = [];
  for (const cs of [...s.clients.values()]) {
    const keys = [...cs.wantsWhat].map((ts) => ts.key);
    clientReleasesKeys(s, cs, keys);
    if (cs.standIn) s.clients.delete(cs.id);
    else if (keys.length > 0) lost.push([cs, keys]);
  }
  s.datasets.clear();
  s.processRecommendations();

  abandonRetirements(s, RESTART_REASON);
  const workers: string[] = [];
  const nannies: string[] = [];
  for (const ws of [...s.workers.values()]) {
    workers.push(ws.address);
    if (ws.nanny) nannies.push(ws.address);
    s.sendToWorker(ws, {
      op: "close-worker",
      reason: "restart",
      restart: true,
      stimulusId: s.stimulusId,
    });
    removeWorker(s, ws.address, true, false);
  }

  for (const [cs, keys] of lost) {
    s.sendToClient(cs, {
      op: "cancelled-keys",
      keys,
      reason: RESTART_REASON,
      stimulusId: s.stimulusId,
      submission: cs.lastSubmission,
    });
  }
  s.sendToClient(requester, { op: "restarted", workers, nannies, stimulusId: s.stimulusId });
}

/** Handle `restart-workers`: see the module's comment. */
export function restartWorkers(s: SchedulerState, msg: RestartWorkersMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const { workers, unmatched } = namedWorkers(s, new Set(msg.workers));
  const restarted: string[] = [];
  const failed: { worker: string; reason: string }[] = [];
  for (const ws of workers) {
    if (!ws.nanny) {
      failed.push({ worker: ws.address, reason: "it has no nanny to start it again" });
    } else if (isRetiring(s, ws)) {
      failed.push({ worker: ws.address, reason: "it is being retired" });
    } else {
      restarted.push(ws.address);
      s.sendToWorker(ws, {
        op: "close-worker",
        reason: "restart",
        restart: true,
        stimulusId: s.stimulusId,
      });
      removeWorker(s, ws.address, true);
    }
  }
  for (const name of unmatched)
    failed.push({ worker: name, reason: "no connected worker matches it" });
  s.sendToClient(cs, {
    op: "workers-restarted",
    restarted,
    failed,
    remaining: s.workers.size,
    stimulusId: s.stimulusId,
  });
}
