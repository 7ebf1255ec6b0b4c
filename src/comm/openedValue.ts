/**
 * A client's cloned value that the scheduler reads itself, rather than holds
 * and sends on: metadata it keeps in its tree, the arguments of code it runs
 * (`runOnScheduler`), a logged event given to its plugins. Its TCP comms forward
 * a cloned typed array, `Buffer` or `ArrayBuffer` unread, as a
 * `ForwardedClonedValue` (see `forwardedBytes.ts`): written back to the wire as
 * it came, that is the value again, but read, stored inside another value or
 * wrapped in a `ClonedValue` of its own, it is an object with no properties,
 * and a typed array set as metadata came back as `{}`.
 */

import { valueOfClonedBytes } from "./clonedBytes.ts";
import { ClonedValue } from "./clonedValue.ts";
import { ForwardedClonedValue } from "./forwardedBytes.ts";

/**
 * `v` unwrapped (as `ClonedValue.unwrap`), a forwarded one made into the value it
 * stands for: a copy of its bytes, so that keeping it keeps no chunk of the
 * socket's it arrived in.
 */
export function openedValue(v: unknown): unknown {
  if (!(v instanceof ForwardedClonedValue)) return ClonedValue.unwrap(v);
  const bytes = new Uint8Array(v.byteLength);
  let at = 0;
  for (const piece of v.pieces) {
    bytes.set(piece, at);
    at += piece.byteLength;
  }
  return valueOfClonedBytes(bytes, v.kind);
}
