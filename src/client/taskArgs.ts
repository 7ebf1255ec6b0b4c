/**
 * Preparing task arguments on the client: futures (at any depth in arrays
 * and plain objects) become task references and dependencies; values that
 * cannot travel as data (functions, symbols, reference cycles) are refused
 * with an error naming where they are.
 */

import { isTaskRef, type TaskRef, taskRef } from "../protocol/messagesTaskSpec.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { Future } from "./future.ts";

/**
 * How a leaf is replaced: the replacement, or `undefined` to keep it. Called
 * for strings, task references and futures.
 */
export type LeafReplacer = (value: string | TaskRef | Future, path: string) => unknown;

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True if `v` is a {@link TaskDefinition} (what `defineTask` returns). */
export function isTaskDefinition(v: unknown): v is TaskDefinition {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { name?: unknown }).name === "string" &&
    typeof (v as { fn?: unknown }).fn === "function"
  );
}

/** The registered name of a task function given as a definition or a name. */
export function taskName(fn: TaskDefinition<TaskFunction> | string, what: string): string {
  const name = typeof fn === "string" ? fn : isTaskDefinition(fn) ? fn.name : null;
  if (name === null || name === "") {
    throw new TypeError(
      `${what}: the function must be a task definition (from defineTask) or a registered name, got ${typeof fn === "function" ? "a plain function (register it with defineTask)" : JSON.stringify(fn)}`,
    );
  }
  return name;
}

/**
 * `value` with leaves replaced by `replace` (copy on write: parts without
 * replacements are shared). Strings are offered to `replace` only inside
 * arrays (as Dask matches keys in lists); task references and futures
 * anywhere. Throws a TypeError naming the path of a function, a symbol or a cycle.
 */
export function mapArgs(
  value: unknown,
  replace: LeafReplacer,
  what: string,
  path = "args",
  inArray = true,
  seen: Set<object> = new Set(),
): unknown {
  switch (typeof value) {
    case "function":
      throw new TypeError(`${what}: ${path} is a function; task arguments must be data`);
    case "symbol":
      throw new TypeError(`${what}: ${path} is a symbol; task arguments must be data`);
    case "string":
      if (!inArray) return value;
      return replace(value, path) ?? value;
    case "object":
      break;
    default:
      return value;
  }
  if (value === null) return value;
  if (value instanceof Future || isTaskRef(value)) return replace(value, path) ?? value;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return value;
  if (seen.has(value)) throw new TypeError(`${what}: ${path} contains a reference cycle`);
  seen.add(value);
  try {
    if (isArray) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        const r = mapArgs(item, replace, what, `${path}[${i}]`, true, seen);
        if (r !== item && out === null) out = value.slice(0, i);
        if (out !== null) out.push(r);
      }
      return out ?? value;
    }
    const rec = value as Record<string, unknown>;
    let out: Record<string, unknown> | null = null;
    for (const k of Object.keys(rec)) {
      const item = rec[k];
      const r = mapArgs(item, replace, what, `${path}.${k}`, false, seen);
      if (r !== item && out === null) out = { ...rec };
      if (out !== null) out[k] = r;
    }
    return out ?? value;
  } finally {
    seen.delete(value);
  }
}

/**
 * `args` for a submitted task: every future of `owner` becomes a task
 * reference and its key is added to `deps`. A future of another client is refused.
 */
export function argsWithRefs(
  args: readonly unknown[],
  deps: Set<string>,
  owner: object,
  what: string,
): unknown[] {
  return mapArgs(
    args,
    (v, path) => {
      if (v instanceof Future) {
        if (v.host !== owner) throw new TypeError(`${what}: ${path} is a future of another client`);
        deps.add(v.key);
        return taskRef(v.key);
      }
      if (typeof v !== "string") deps.add(v.__weftRef);
      return undefined;
    },
    what,
  ) as unknown[];
}
