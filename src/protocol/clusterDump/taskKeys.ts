/** Task keys in value positions (events, log entries, key lists), read as their `str()`. */

import { type Ctx, child, describe, type PathNode } from "./errors.ts";
import { pyStr } from "./pyRepr.ts";
import type { DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/** A task key in a value position (a string, or a list standing for a tuple) as its `str()`. */
export function keyString(v: DumpValue | undefined, path: PathNode | null, ctx: Ctx): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null || isDumpObject(v)) {
    return ctx.fail(
      path,
      v === undefined ? "missing (expected a task key)" : `expected a task key, got ${describe(v)}`,
    );
  }
  const s = pyStr(v);
  if (s === null) return ctx.fail(path, `expected a task key, got ${describe(v)}`);
  return s;
}

export function keyList(v: DumpValue | undefined, path: PathNode | null, ctx: Ctx): string[] {
  const list = ctx.list(v, path);
  return list.map((k, i) => keyString(k, child(path, i), ctx));
}

export function keyListsByWorker(
  v: DumpValue | undefined,
  path: PathNode | null,
  ctx: Ctx,
): Record<string, string[]> {
  const obj = ctx.object(v, path);
  const out: Record<string, string[]> = {};
  for (const [w, keys] of Object.entries(obj)) {
    const list = keyList(keys, child(path, w), ctx);
    obj[w] = list;
    out[w] = list;
  }
  return out;
}
