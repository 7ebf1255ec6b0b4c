/**
 * A route whose answer is costly to make, answered again from its last answer
 * for a while: the `/status` pages read every task, and are drawn on the event
 * loop that also runs the scheduler (or the worker). A 20 000-task page takes
 * tens of milliseconds; a few clients asking for it in a loop, or many browser
 * tabs, would otherwise hold the loop most of the time, and every message of
 * the cluster would wait behind them.
 */

import type { HttpReply, HttpRoute } from "./httpEndpoints.ts";

/** How {@link throttledRoute} bounds the time spent answering. */
export interface ThrottleOptions {
  /**
   * The most of the time that answering may take, in (0, 1] (default 0.1): an
   * answer that took `d` ms to make is given again for `d × (1 / share − 1)`
   * ms after it was made. A cheap page is thus as good as live, a costly one
   * is as old as its cost requires. `d` is the lesser of the last two answers'
   * costs, so that one slow draw (a GC pause, a burst of messages) does not
   * freeze the page for nine times its length.
   */
  readonly share?: number;
  /** Milliseconds of a monotonic clock (default `performance.now`). */
  readonly now?: () => number;
}

/**
 * `route`, answering from its last answer while that is fresh (see
 * {@link ThrottleOptions}); requests that come while an answer is being made
 * wait for that one. A route that throws is asked again on the next request.
 */
export function throttledRoute(route: HttpRoute, options: ThrottleOptions = {}): HttpRoute {
  const { share = 0.1, now = () => performance.now() } = options;
  if (!(share > 0 && share <= 1)) throw new RangeError(`share must be in (0, 1], got ${share}`);
  let last: { readonly reply: HttpReply; readonly until: number } | null = null;
  let pending: Promise<HttpReply> | null = null;
  let lastCost = Number.POSITIVE_INFINITY;
  return () => {
    if (last !== null && now() < last.until) return last.reply;
    if (pending !== null) return pending;
    const start = now();
    const made = (async () => route())().then((answer) => {
      // Encoded once: a megabyte page encoded again for every request costs milliseconds each.
      const reply = {
        ...answer,
        body: typeof answer.body === "string" ? Buffer.from(answer.body) : answer.body,
      };
      const end = now();
      const cost = Math.min(end - start, lastCost);
      lastCost = end - start;
      last = { reply, until: end + cost * (1 / share - 1) };
      return reply;
    });
    pending = made.finally(() => {
      pending = null;
    });
    return pending;
  };
}
