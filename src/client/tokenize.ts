/** Deterministic keys for submitted tasks, as Dask's `tokenize` (pure functions). */

import { createHash } from "node:crypto";
import { encodeMessage } from "../comm/wireCodec.ts";

/**
 * `name-<hash>`: the same function and arguments give the same key, so
 * submitting them twice computes them once. Throws a TypeError if the
 * arguments cannot be encoded.
 */
export function tokenize(name: string, args: readonly unknown[]): string {
  let bytes: Uint8Array;
  try {
    bytes = encodeMessage([name, args]);
  } catch (err) {
    throw new TypeError(
      `submit(${name}): the arguments cannot be sent: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return `${name}-${createHash("sha1").update(bytes).digest("hex").slice(0, 32)}`;
}
