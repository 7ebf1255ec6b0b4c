/**
 * A copy of a value as a TCP peer would receive it, for the paths that pass
 * values by reference in process (an in-process cluster): scattered values and
 * actor arguments and results. It goes through the very functions a
 * `ClonedValue` goes through on the wire, so that in process and over TCP a
 * value arrives the same (a `Buffer` stays a `Buffer`, which `structuredClone`
 * would make a `Uint8Array`; a `SharedArrayBuffer` is refused, which
 * `structuredClone` would share), with no memory left shared with the sender.
 */

import { types } from "node:util";
import { clonedBytes, rawKind, valueOfClonedBytes } from "../comm/clonedBytes.ts";
import { SerializationError } from "../comm/errors.ts";
import type { ValueCheck } from "../protocol/values.ts";

/**
 * `value` after a round trip through the wire's cloned-value encoding, not
 * sharing memory with it. Throws a `SerializationError` for a value that cannot
 * be cloned, as sending it would. `check`: what `checkValue` found of `value`
 * (data); when it holds no `Buffer` and no view of shared memory, the faster
 * `structuredClone` makes the same copy (it differs from `v8.serialize` only in
 * those, and in host objects, which are not data).
 */
export function wireClone(value: unknown, check?: ValueCheck): unknown {
  // Primitives are immutable and kept exactly by the clone (strings too).
  if (typeof value !== "object" || value === null) {
    if (typeof value === "function" || typeof value === "symbol") clonedBytes(value); // throws
    return value;
  }
  if (value instanceof ArrayBuffer && Object.getPrototypeOf(value) === ArrayBuffer.prototype) {
    return value.slice(0);
  }
  if (check?.problem === null && !check.holdsBuffers && rawKind(value) < 0) {
    const copied = plainCopy(value, { containers: [], leaves: 0 });
    if (copied !== NOT_PLAIN) return copied;
    try {
      return structuredClone(value);
    } catch (err) {
      throw new SerializationError(`cannot clone a value: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const { bytes, kind } = clonedBytes(value);
  // Raw bytes are a view of the value's memory: copied, so that the clone owns its own.
  return valueOfClonedBytes(kind === null ? bytes : new Uint8Array(bytes), kind);
}

/** What {@link plainCopy} gives for a value it does not copy. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * At most this many arrays and objects, and values in them, are copied by
 * {@link plainCopy}: it is for the small values of most actor calls, where
 * `structuredClone`'s fixed cost (1.7 µs for `{id, name, tags: [3 strings],
 * values: [4 numbers]}`, against 0.16 µs) is most of a call's; a larger value
 * is cloned.
 */
const PLAIN_MAX_CONTAINERS = 64;
const PLAIN_MAX_LEAVES = 1024;

/**
 * A copy of `v` equal to its structured clone, if `v` is made of primitives,
 * arrays of `Array.prototype` without holes or other properties, and objects
 * of `Object.prototype` (no `__proto__` key), each reached once (no shared
 * reference, no cycle: the clone would keep them), within the limits above;
 * else {@link NOT_PLAIN}. Values are read once, as the clone reads them.
 */
function plainCopy(v: unknown, budget: { containers: object[]; leaves: number }): unknown {
  const t = typeof v;
  if (t !== "object") {
    if (t === "function" || t === "symbol") return NOT_PLAIN;
    budget.leaves++;
    return v;
  }
  if (v === null) return v;
  const proto = Object.getPrototypeOf(v);
  const isArray = proto === Array.prototype;
  if ((!isArray && proto !== Object.prototype) || types.isProxy(v)) return NOT_PLAIN;
  const containers = budget.containers;
  if (containers.length >= PLAIN_MAX_CONTAINERS || containers.includes(v as object)) {
    return NOT_PLAIN;
  }
  containers.push(v as object);
  const keys = Object.keys(v as object);
  if (budget.leaves + keys.length > PLAIN_MAX_LEAVES) return NOT_PLAIN;
  if (isArray) {
    const a = v as unknown[];
    // Fewer keys than elements: holes; more: properties besides the elements.
    if (!Array.isArray(a) || keys.length !== a.length) return NOT_PLAIN;
    const out = new Array<unknown>(a.length);
    for (let i = 0; i < a.length; i++) {
      const item = plainCopy(a[i], budget);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === "__proto__") return NOT_PLAIN; // assigning it would set the copy's prototype
    const item = plainCopy(o[k], budget);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[k] = item;
  }
  return out;
}
