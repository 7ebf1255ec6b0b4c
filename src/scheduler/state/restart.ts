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
 */

import type { RestartMsg } from "../../protocol/messagesClient.ts";
import { clientReleasesKeys } from "./clientHandlers.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { abandonRetirements } from "./retire.ts";
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
