/**
 * Diagnostics of a stuck run: which keys hold the client up, and their
 * stories on the scheduler and on every worker that knows them.
 */

import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import { formatLogEntry as formatSchedulerEntry } from "../scheduler/state/story.ts";
import type { TaskState } from "../scheduler/state/taskState.ts";
import { formatLogEntry as formatWorkerEntry } from "../worker/state/errors.ts";
import type { SimWorker } from "./simWorker.ts";

/** Story records shown per key and machine (the most recent ones). */
const STORY_TAIL = 25;

/**
 * The tasks that hold up `pendingKeys`: walking down from each through
 * dependencies not in memory, the first tasks that are not merely waiting on
 * another such task. At most `limit`, in discovery order.
 */
export function stuckKeys(s: SchedulerState, pendingKeys: readonly string[], limit = 4): string[] {
  const out: string[] = [];
  const seen = new Set<TaskState>();
  const stack: TaskState[] = [];
  for (const key of pendingKeys) {
    const ts = s.tasks.get(key);
    if (ts !== undefined) stack.push(ts);
    else if (out.length < limit) out.push(key);
  }
  stack.reverse();
  while (stack.length > 0 && out.length < limit) {
    const ts = stack.pop() as TaskState;
    if (seen.has(ts)) continue;
    seen.add(ts);
    const blockers = [...ts.dependencies].filter((d) => d.state !== "memory");
    if (ts.state === "waiting" && blockers.length > 0) {
      for (let i = blockers.length - 1; i >= 0; i--) stack.push(blockers[i]);
    } else if (ts.state !== "memory" && ts.state !== "erred") {
      out.push(ts.key);
    }
  }
  return out;
}

function tail<T>(xs: readonly T[]): { shown: readonly T[]; skipped: number } {
  const skipped = Math.max(0, xs.length - STORY_TAIL);
  return { shown: xs.slice(skipped), skipped };
}

/** The stories of `keys` on the scheduler and every worker (alive or dead) that knows them. */
export function storiesOf(
  s: SchedulerState,
  workers: Iterable<SimWorker>,
  keys: readonly string[],
): string {
  const lines: string[] = [];
  const all = [...workers];
  for (const key of keys) {
    const ts = s.tasks.get(key);
    const where =
      ts === undefined
        ? "unknown to the scheduler"
        : `${ts.state}${ts.processingOn ? ` on ${ts.processingOn.address}` : ""}` +
          (ts.whoHas.size > 0
            ? `, held by ${[...ts.whoHas].map((w) => w.address).join(" ")}`
            : "") +
          (ts.waitingOn.size > 0
            ? `, waiting on ${[...ts.waitingOn].map((d) => d.key).join(" ")}`
            : "");
    lines.push(`key ${key}: scheduler says ${where}`);
    const sstory = tail(s.story(key));
    lines.push(`  scheduler story${sstory.skipped > 0 ? ` (last ${STORY_TAIL})` : ""}:`);
    for (const e of sstory.shown) lines.push(`    ${formatSchedulerEntry(e)}`);
    for (const w of all) {
      const wts = w.state.tasks.get(key);
      const story = w.state.story(key);
      if (wts === undefined && story.length === 0) continue;
      const state = wts === undefined ? "forgotten" : wts.state;
      const life = w.alive ? (w.paused ? "paused" : "alive") : "dead";
      const t = tail(story);
      lines.push(`  worker ${w.address} (${life}), task ${state}:`);
      for (const e of t.shown) lines.push(`    ${formatWorkerEntry(e)}`);
    }
  }
  return lines.join("\n");
}
