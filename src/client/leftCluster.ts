/**
 * Whether a worker a call could not reach has left the cluster: for the calls
 * whose effect the scheduler keeps for the workers to come (`uploadFile`,
 * `loadTaskModules`, the plugin registrations), which leave such a worker out
 * rather than fail. Failing, they kept nothing, so that the workers joining
 * later (the one that left among them, if its nanny starts it again) lacked
 * what the others had: a worker killed, retired or removed for going silent
 * while an upload was under way left the cluster's tasks failing on every new
 * worker with `UnknownTaskFunctionError`. Also, looking once, whether an
 * actor's worker is still there before a client first connects to it
 * (`Client.callActor`).
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { LEAVERS_POLL_MS } from "./askWorkers.ts";

/**
 * How long a worker the client could not reach is watched for the scheduler
 * to remove it, in ms: a killed worker's connection to the scheduler ends with
 * it, so that its removal follows within a moment; one that stays listed (cut
 * off from the client alone) is a failure, as before.
 */
export const LEFT_WATCH_MS = 2_000;

/**
 * True once `workers()` (the scheduler's list) no longer has `address`,
 * looking every {@link LEAVERS_POLL_MS} for up to `watchMs`; false if it still
 * has it then, or cannot be asked (the client closed: the failure stands).
 */
export async function leftTheCluster(
  address: string,
  workers: () => Promise<readonly WorkerIdentity[]>,
  watchMs = LEFT_WATCH_MS,
): Promise<boolean> {
  const end = performance.now() + watchMs;
  for (;;) {
    let listed: readonly WorkerIdentity[];
    try {
      listed = await workers();
    } catch {
      return false;
    }
    if (!listed.some((w) => w.address === address)) return true;
    if (performance.now() >= end) return false;
    await sleep(LEAVERS_POLL_MS);
  }
}
