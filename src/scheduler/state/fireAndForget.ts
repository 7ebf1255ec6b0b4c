/**
 * `fire-and-forget` (Dask's `fire_and_forget`): tasks that run even once no
 * client wants them. A stand-in client, the `fire-and-forget` client of Dask's
 * scheduler, wants them until each is done (in memory or erred), and then lets
 * it go, so that its result is not kept.
 */

import type { FireAndForgetMsg } from "../../protocol/messagesClient.ts";
import { addWant, clientReleasesKeys } from "./clientHandlers.ts";
import { ClientInfo, FIRE_AND_FORGET_CLIENT } from "./clientInfo.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";

/**
 * The stand-in client wants `msg.keys` until each is done. A key already done
 * (its result would be let go at once) or unknown (forgotten, cancelled) is
 * skipped, where Dask would hold a done key for good.
 */
export function fireAndForget(s: SchedulerState, msg: FireAndForgetMsg): void {
  let cs = s.clients.get(FIRE_AND_FORGET_CLIENT);
  for (const key of msg.keys) {
    const ts = s.tasks.get(key);
    if (ts === undefined || ts.state === "memory" || ts.state === "erred") continue;
    if (ts.state === "released" && ts.runSpec === null) continue; // lost scattered data
    if (cs === undefined) {
      cs = new ClientInfo(FIRE_AND_FORGET_CLIENT, true);
      s.clients.set(cs.id, cs);
    }
    addWant(s, cs, ts);
  }
}

/** `ts` is done (in memory or erred): the stand-in client lets it go if it wanted it. */
export function doneForFireAndForget(s: SchedulerState, ts: TaskState): void {
  if (ts.whoWants.size === 0) return;
  const cs = s.clients.get(FIRE_AND_FORGET_CLIENT);
  if (cs?.wantsWhat.has(ts)) clientReleasesKeys(s, cs, [ts.key]);
}
