/** The normalized values a dump decodes to (see the module comment of `../clusterDump.ts`). */

/**
 * A normalized dump value: what Python's `recursive_to_dict` output becomes
 * once decoded (see the module comment). `bigint` only for integers beyond
 * ±(2**53-1); `Uint8Array` only for raw bytes, which Dask's dumps do not hold.
 */
export type DumpValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | DumpList
  | DumpObject;

/** A normalized list (a Python list, tuple, set or deque). */
export type DumpList = DumpValue[];

/** A normalized mapping: string keys (Python `str()` of the original keys). */
export interface DumpObject {
  [key: string]: DumpValue;
}

/** True for a normalized mapping (not a list, bytes or scalar). */
export function isDumpObject(v: DumpValue | undefined): v is DumpObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}
