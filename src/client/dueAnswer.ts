/**
 * Keeping the process alive while an answer is due. A coordination wait with a
 * timeout (`Event.wait({ timeoutMs })`, `Lock.acquire({ timeoutMs })`, …) is
 * timed by the scheduler, whose timers are unref'd (a waiting client must not
 * keep a scheduler process alive). Over TCP the client's socket keeps its own
 * process alive meanwhile; in one process (`inproc://`, a LocalCluster's
 * default) nothing did, so a program awaiting such a wait at its top level and
 * doing nothing else exited (code 13, the await unsettled) instead of getting
 * its answer when the timeout passed.
 */

import { MAX_TIMER_MS } from "../util/timers.ts";

/**
 * `answer`, with the event loop held alive until it settles when it is due
 * within `timeoutMs` (a number of milliseconds > 0). A wait without a timeout
 * is left as it is: in one process with nothing else running, nobody could
 * end it, and the process ending beats hanging.
 */
export function holdAliveUntilAnswered<T>(answer: Promise<T>, timeoutMs: unknown): Promise<T> {
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0)) return answer;
  const keepAlive = setInterval(() => {}, MAX_TIMER_MS);
  return answer.finally(() => clearInterval(keepAlive));
}
