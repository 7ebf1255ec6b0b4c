/**
 * A task submitted after one of its inputs was reported unrunnable
 * (`task-no-worker`) waits behind it, and the scheduler does not tell again.
 * The client tells its future itself: this finds, for each wanted key of a
 * submission, an input it holds (directly or through the submitted tasks)
 * that is in `no-worker`.
 */

import type { GraphTask } from "../protocol/messagesClient.ts";
import type { KeyRecord } from "./keyRecord.ts";

/**
 * `{wanted key: record of an unrunnable input}` for the wanted keys of
 * `tasks` that depend on a `no-worker` key, searched through `tasks`.
 */
export function heldUpKeys(
  tasks: ReadonlyMap<string, GraphTask>,
  wanted: readonly string[],
  records: ReadonlyMap<string, KeyRecord>,
): Map<string, KeyRecord> {
  const out = new Map<string, KeyRecord>();
  const memo = new Map<string, KeyRecord | null>();
  const find = (root: string): KeyRecord | null => {
    const stack = [root];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const key = stack.pop() as string;
      if (seen.has(key)) continue;
      seen.add(key);
      const known = memo.get(key);
      if (known !== undefined) {
        if (known !== null) return known;
        continue;
      }
      const task = tasks.get(key);
      if (task === undefined) {
        const rec = records.get(key);
        if (rec?.status === "no-worker") return rec;
        continue;
      }
      for (const dep of task.dependencies) stack.push(dep);
    }
    return null;
  };
  for (const key of wanted) {
    const task = tasks.get(key);
    if (task === undefined) continue;
    let hit: KeyRecord | null = null;
    for (const dep of task.dependencies) {
      hit = find(dep);
      if (hit !== null) break;
    }
    memo.set(key, hit);
    if (hit !== null) out.set(key, hit);
  }
  return out;
}
