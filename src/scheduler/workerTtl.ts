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
