/**
 * The cluster's metadata, the client's side (Dask's `set_metadata` and
 * `get_metadata`): values are copied (structured-cloned) when set and when
 * got; the scheduler keeps them in a tree of plain objects
 * (`src/scheduler/metadata.ts`).
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { showValue } from "../util/showValue.ts";
import { receivedCopy, wireCopy } from "./wireCopy.ts";

/** The key path: one key, or an array of them (none: the whole tree, for reading). */
export function metadataKeys(what: string, keys: unknown, allowEmpty: boolean): string[] {
  const list = Array.isArray(keys) ? keys : [keys];
  if (!list.every((k) => typeof k === "string") || (!allowEmpty && list.length === 0)) {
    throw new TypeError(
      `${what}: the keys must be a string or an array of strings${allowEmpty ? "" : " (at least one)"}, got ${showValue(keys)}`,
    );
  }
  return list as string[];
}

/** A value as it travels: copied now; a future is refused (it is the client's). */
export function encodeMetadata(value: unknown): ClonedValue {
  return wireCopy("setMetadata", value, "metadata");
}

/** What the scheduler answered, a copy of this client's own (in process the scheduler's is shared). */
export function decodeMetadata(v: unknown): unknown {
  return receivedCopy(ClonedValue.unwrap(v));
}
