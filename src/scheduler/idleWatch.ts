/**
 * When the scheduler has been idle for long enough (Dask's `idle_timeout` and
 * `Scheduler.check_idle`): no transition since the last look, and nothing
 * running, queued or waiting for a worker. A batch job's cluster then ends
 * by itself once its work is over, rather than holding its nodes until the
 * job's time limit.
 */

import type { SchedulerState } from "./state/schedulerState.ts";

/** Whether `s` has work in hand: a task running on a worker, queued, or waiting for a worker. */
function hasWork(s: SchedulerState): boolean {
  if (s.queued.size > 0 || s.unrunnable.size > 0) return true;
  for (const ws of s.workers.values()) if (ws.processing.size > 0) return true;
  return false;
}

/** Looks at a scheduler now and then; says when it has been idle for `timeoutMs`. */
export class IdleWatch {
  private lastCounter = -1;
  /** Since when (ms) the scheduler has been idle, or null. */
  private idleSince: number | null = null;

  constructor(readonly timeoutMs: number) {}

  /** True once `s` has been idle for `timeoutMs` at `nowMs` (any clock in ms). */
  check(s: SchedulerState, nowMs: number): boolean {
    if (s.transitionCounter !== this.lastCounter || hasWork(s)) {
      this.lastCounter = s.transitionCounter;
      this.idleSince = null;
      return false;
    }
    this.idleSince ??= nowMs;
    return nowMs - this.idleSince >= this.timeoutMs;
  }
}
