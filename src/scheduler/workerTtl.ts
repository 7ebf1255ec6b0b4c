/** Finding workers that stopped talking (Dask's `check_worker_ttl`). */

import type { SchedulerState } from "./state/schedulerState.ts";

/** The addresses of the workers last heard from more than `ttlSeconds` before `now`. */
export function silentWorkers(state: SchedulerState, now: number, ttlSeconds: number): string[] {
  const out: string[] = [];
  for (const ws of state.workers.values()) {
    if (now - ws.lastSeen > ttlSeconds) out.push(ws.address);
  }
  return out;
}

/** How often to look for silent workers: a quarter of the TTL, between 50 ms and 1 s. */
export function ttlCheckIntervalMs(ttlMs: number): number {
  return Math.min(1000, Math.max(50, ttlMs / 4));
}

/**
 * A gap between two looks longer than this, in ms, means the event loop was blocked
 * (the heartbeats sent meanwhile are unread): half the TTL, and at least two check
 * intervals. Below a 100 ms TTL the 50 ms interval is more than half of it: every look
 * was taken for a block, and a silent worker was never removed.
 */
export function blockedGapMs(ttlMs: number): number {
  return Math.max(ttlMs / 2, 2 * ttlCheckIntervalMs(ttlMs));
}
