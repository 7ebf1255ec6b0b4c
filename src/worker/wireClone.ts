/**
 * A copy of a value as a TCP peer would receive it, for the paths that pass
 * values by reference in process (an in-process cluster): scattered values and
 * actor arguments and results. It goes through the very functions a
 * `ClonedValue` goes through on the wire, so that in process and over TCP a
 * value arrives the same (a `Buffer` stays a `Buffer`, which `structuredClone`
 * would make a `Uint8Array`; a `SharedArrayBuffer` is refused, which
 * `structuredClone` would share), with no memory left shared with the sender.
 */

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
