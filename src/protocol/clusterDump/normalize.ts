/**
 * Normalization of a decoded dump into a tree of {@link DumpValue}s (see the module
 * comment of `../clusterDump.ts`).
 */

import { setOwnKey } from "../../util/ownKey.ts";
import { type Ctx, child, describe, type PathNode } from "./errors.ts";
import { listReprToTupleRepr, pyStr } from "./pyRepr.ts";
import type { DumpList, DumpObject, DumpValue } from "./values.ts";

function setProp(obj: DumpObject, key: string, value: DumpValue): void {
  if (key === "__proto__") setOwnKey(obj, key, value);
  else obj[key] = value;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function normalizeMapKey(k: unknown, path: PathNode | null, ctx: Ctx): string {
  if (typeof k === "string") return listReprToTupleRepr(k) ?? k;
  const s = pyStr(k);
  if (s === null) ctx.fail(path, `unsupported mapping key: ${describe(k)}`);
  return s;
}

/**
 * The deepest nesting of lists and mappings accepted. Dask's dumps nest about a dozen
 * levels; a corrupt or hand-made one can nest thousands, and then the recursive code
 * downstream (record formatting, story JSON) overflows the stack with a raw trace. The
 * `yaml` package's composer overflows from about 790 levels, hence 500.
 */
export const MAX_NESTING = 500;

/** The reason given for a value nested deeper than {@link MAX_NESTING}. */
export const TOO_DEEP = `holds values nested more than ${MAX_NESTING} levels deep`;

/** Fails for a value nested deeper than {@link MAX_NESTING}, at `depth` below the root. */
function tooDeep(path: PathNode | null, depth: number, ctx: Ctx): never {
  // The full path would be a thousand `[0]`s: name a shallow ancestor instead.
  let p = path;
  for (let i = 0; i < depth - 10 && p !== null; i++) p = p.parent;
  return ctx.fail(p, TOO_DEEP);
}

function normalizeEntries(
  entries: Iterable<[unknown, unknown]>,
  path: PathNode | null,
  ctx: Ctx,
  depth: number,
): DumpObject {
  const out: DumpObject = {};
  for (const [k, v] of entries) {
    const key = normalizeMapKey(k, path, ctx);
    if (Object.hasOwn(out, key)) ctx.fail(path, `two keys both read as ${JSON.stringify(key)}`);
    setProp(out, key, normalizeTree(v, child(path, key), ctx, depth + 1));
  }
  return out;
}

export function normalizeTree(v: unknown, path: PathNode | null, ctx: Ctx, depth = 0): DumpValue {
  switch (typeof v) {
    case "string":
    case "boolean":
    case "number":
      return v;
    case "bigint":
      return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v;
    case "undefined":
      return null;
    default:
      break;
  }
  if (v === null) return null;
  if (depth > MAX_NESTING && (Array.isArray(v) || typeof v === "object")) {
    return tooDeep(path, depth, ctx);
  }
  if (Array.isArray(v)) {
    const out: DumpList = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      out[i] = normalizeTree(v[i], child(path, i), ctx, depth + 1);
    }
    return out;
  }
  if (v instanceof Map) return normalizeEntries(v.entries(), path, ctx, depth);
  if (v instanceof Uint8Array) return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    return normalizeEntries(Object.entries(v), path, ctx, depth);
  }
  const what = typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v;
  return ctx.fail(path, `unsupported value (${what})`);
}
