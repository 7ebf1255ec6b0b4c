/**
 * Memory-footprint estimates for arbitrary JS values, in the spirit of
 * `dask.sizeof.sizeof`: the worker uses them to account for the data it holds
 * (spilling, `nbytes` reported to the scheduler), so they must be cheap,
 * roughly right, and never throw.
 *
 * Like dask, large containers are sampled (10 items) and the sample scaled up,
 * and unknown objects get a fixed default. Unlike dask, sampling is
 * deterministic (evenly spaced, not `random.sample`) so that estimates are
 * reproducible, and the walk is bounded in depth and cycle-safe: an object
 * met a second time in one walk counts as a reference only.
 */

import { mapEntries, setValues } from "./collectionEntries.ts";

/** Size of a pointer / reference slot. */
const POINTER = 8;
/** Fixed cost of any heap object (header, hidden class, properties pointer). */
const OBJECT_OVERHEAD = 16;
/** Fixed cost of a string on top of its characters. */
const STRING_OVERHEAD = 16;
/** Estimate for values we cannot inspect (functions, promises, weak collections...). */
export const DEFAULT_SIZEOF = 64;
/** How many items of a large container are measured (dask's `num_samples`). */
const SAMPLE_SIZE = 10;
/**
 * How deep containers are walked; deeper containers count only their own slots.
 * As deep as a task result may be (`MAX_ARG_DEPTH`): Dask's sizeof has no limit
 * but Python's recursion's, and the budget below bounds the work anyway. A
 * shallower cap measured a 10 MB array nine levels down as 496 bytes, which the
 * spilling store and the memory monitor then never saw.
 */
const MAX_DEPTH = 1000;
/** How many objects one call inspects at most; after that, containers count only their own slots. */
const MAX_OBJECTS = 10_000;

/** Per-call walk state. */
interface Seen {
  /** Objects already counted: the cycle and sharing guard. */
  readonly objects: Set<object>;
  /** Objects the walk may still inspect (bounds work at 10 samples per level). */
  budget: number;
}

/** Whether a container at `depth` may be walked into, rather than counted shallowly. */
function mayDescend(depth: number, seen: Seen): boolean {
  return depth < MAX_DEPTH && seen.budget > 0;
}

/** Evenly spaced indices `0..n-1` picking `k` of them (deterministic stand-in for random.sample). */
function sampleIndex(j: number, n: number, k: number): number {
  return Math.floor((j * n) / k);
}

/** Size of a string: UTF-16 code units plus header. */
function sizeofString(s: string): number {
  return STRING_OVERHEAD + 2 * s.length;
}

/** Size of an array: header, one slot per element, plus elements (sampled when large). */
function sizeofArray(a: readonly unknown[], depth: number, seen: Seen): number {
  const n = a.length;
  const own = OBJECT_OVERHEAD + POINTER * n;
  if (n === 0 || !mayDescend(depth, seen)) return own;
  if (n <= SAMPLE_SIZE) {
    let total = own;
    for (let i = 0; i < n; i++) total += walk(a[i], depth + 1, seen);
    return total;
  }
  let sample = 0;
  for (let j = 0; j < SAMPLE_SIZE; j++)
    sample += walk(a[sampleIndex(j, n, SAMPLE_SIZE)], depth + 1, seen);
  return own + Math.trunc((n / SAMPLE_SIZE) * sample);
}

/** Size of a Set: header, hash-table slots, plus the first items scaled up (like dask's sets). */
function sizeofSet(s: ReadonlySet<unknown>, depth: number, seen: Seen): number {
  const n = s.size;
  const own = OBJECT_OVERHEAD + 3 * POINTER * n;
  if (n === 0 || !mayDescend(depth, seen)) return own;
  let sample = 0;
  let taken = 0;
  // What it holds, not what an iterator of its own says (see collectionEntries.ts).
  for (const v of setValues(s)) {
    sample += walk(v, depth + 1, seen);
    if (++taken >= SAMPLE_SIZE) break;
  }
  return own + Math.trunc((n / taken) * sample);
}

/** Size of a Map: header, hash-table slots, plus the first entries scaled up. */
function sizeofMap(m: ReadonlyMap<unknown, unknown>, depth: number, seen: Seen): number {
  const n = m.size;
  const own = OBJECT_OVERHEAD + 4 * POINTER * n;
  if (n === 0 || !mayDescend(depth, seen)) return own;
  let sample = 0;
  let taken = 0;
  for (const [k, v] of mapEntries(m)) {
    sample += walk(k, depth + 1, seen) + walk(v, depth + 1, seen);
    if (++taken >= SAMPLE_SIZE) break;
  }
  return own + Math.trunc((n / taken) * sample);
}

/** Size of an object by its own enumerable string-keyed properties (keys and values). */
function sizeofObject(o: object, depth: number, seen: Seen): number {
  const keys = Object.keys(o);
  const n = keys.length;
  const own = OBJECT_OVERHEAD + 2 * POINTER * n;
  if (n === 0 || !mayDescend(depth, seen)) return own;
  const record = o as Record<string, unknown>;
  const k = Math.min(n, SAMPLE_SIZE);
  let sample = 0;
  for (let j = 0; j < k; j++) {
    const key = keys[n <= SAMPLE_SIZE ? j : sampleIndex(j, n, SAMPLE_SIZE)];
    sample += sizeofString(key) + walk(record[key], depth + 1, seen);
  }
  return own + (k === n ? sample : Math.trunc((n / k) * sample));
}

/** Dispatch on the kind of value; may throw (getters, proxies), the caller catches. */
function walk(value: unknown, depth: number, seen: Seen): number {
  switch (typeof value) {
    case "number":
    case "boolean":
    case "undefined":
      return POINTER;
    case "string":
      return sizeofString(value);
    case "bigint": {
      const bits = (value < 0n ? -value : value).toString(16).length * 4;
      return OBJECT_OVERHEAD + 8 * Math.ceil(bits / 64);
    }
    case "symbol":
      return OBJECT_OVERHEAD + POINTER;
    case "function":
      return DEFAULT_SIZEOF;
    default:
      break;
  }
  if (value === null) return POINTER;
  const obj = value as object;
  if (seen.objects.has(obj)) return POINTER;
  seen.objects.add(obj);
  seen.budget--;
  if (ArrayBuffer.isView(obj)) return OBJECT_OVERHEAD + obj.byteLength;
  if (obj instanceof ArrayBuffer) return OBJECT_OVERHEAD + obj.byteLength;
  if (typeof SharedArrayBuffer !== "undefined" && obj instanceof SharedArrayBuffer) {
    return OBJECT_OVERHEAD + obj.byteLength;
  }
  if (Array.isArray(obj)) return sizeofArray(obj, depth, seen);
  if (obj instanceof Map) return sizeofMap(obj, depth, seen);
  if (obj instanceof Set) return sizeofSet(obj, depth, seen);
  if (obj instanceof Date) return OBJECT_OVERHEAD + POINTER;
  if (obj instanceof RegExp) return OBJECT_OVERHEAD + sizeofString(obj.source);
  if (
    obj instanceof Promise ||
    obj instanceof WeakMap ||
    obj instanceof WeakSet ||
    obj instanceof WeakRef
  ) {
    return DEFAULT_SIZEOF;
  }
  if (obj instanceof Error) {
    // Code may set `message` or `stack` to anything (an object, a number): walked
    // as values, not read as strings, whose `length` would make the size NaN.
    return (
      OBJECT_OVERHEAD + walk(obj.message, depth + 1, seen) + walk(obj.stack ?? "", depth + 1, seen)
    );
  }
  return sizeofObject(obj, depth, seen);
}

/**
 * Estimate the memory footprint of `value` in bytes: numbers 8, strings
 * `2 * length` plus a header, binary data its `byteLength`, containers
 * (arrays, Maps, Sets, plain and class objects) their slots plus their
 * contents, walked to a bounded depth, with large containers sampled.
 * Shared and cyclic references count once, and one call inspects at most
 * 10,000 objects, so the cost is bounded. Never throws: anything that
 * cannot be inspected counts as {@link DEFAULT_SIZEOF}.
 */
export function sizeof(value: unknown): number {
  // Primitives need no bookkeeping (most task results of tiny tasks).
  const t = typeof value;
  if (t === "number" || t === "boolean" || t === "undefined" || value === null) return POINTER;
  if (t === "string") return sizeofString(value as string);
  try {
    return walk(value, 0, { objects: new Set(), budget: MAX_OBJECTS });
  } catch {
    return DEFAULT_SIZEOF;
  }
}

/**
 * A readable type name for logs and error messages: the `typeof` name for
 * primitives and functions (`"number"`, `"string"`, `"bigint"`, `"function"`),
 * `"null"` for null, and the constructor name for objects (`"Array"`, `"Map"`,
 * `"Uint8Array"`, `"Buffer"`, a class name; `"Object"` for plain and
 * null-prototype objects). Never throws.
 */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  const t = typeof value;
  if (t !== "object") return t;
  try {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === null) return "Object";
    const ctor: unknown = (proto as { constructor?: unknown }).constructor;
    if (typeof ctor === "function" && typeof ctor.name === "string" && ctor.name !== "") {
      return ctor.name;
    }
    return "Object";
  } catch {
    return "Object";
  }
}
