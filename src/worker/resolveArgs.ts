/** Replace the task references in a task's arguments by the values they refer to. */

import { isTaskRef } from "../protocol/messagesTaskSpec.ts";
import type { DataStore } from "./state/dataStore.ts";

/** A task refers to a key whose value this worker does not hold. */
export class MissingDependencyError extends Error {
  override name = "MissingDependencyError";
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function resolve(v: unknown, data: DataStore, key: string): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (isTaskRef(v)) {
    const ref = v.__weftRef;
    if (!data.has(ref)) {
      throw new MissingDependencyError(
        `task ${JSON.stringify(key)} refers to ${JSON.stringify(ref)}, which is not in memory on this worker`,
      );
    }
    return data.get(ref);
  }
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      const r = resolve(item, data, key);
      if (r !== item && out === null) out = v.slice(0, i);
      if (out !== null) out.push(r);
    }
    return out ?? v;
  }
  if (!isPlainObject(v)) return v;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(v)) {
    const item = v[k];
    const r = resolve(item, data, key);
    if (r !== item && out === null) out = { ...v };
    if (out !== null) out[k] = r;
  }
  return out ?? v;
}

/**
 * `args` with every `TaskRef` (in arrays and plain objects, at any depth)
 * replaced by the value `data` holds for it. The input is not modified; parts
 * without references are shared. Throws a {@link MissingDependencyError} for a
 * reference to a key `data` does not hold.
 */
export function resolveArgs(args: readonly unknown[], data: DataStore, key: string): unknown[] {
  return resolve(args, data, key) as unknown[];
}
