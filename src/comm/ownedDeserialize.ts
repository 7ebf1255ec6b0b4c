/**
 * `v8.deserialize`, but a typed array, `Buffer` or `DataView` in the value
 * that is a small part of the bytes it was read from is copied out of them.
 * Node's deserializer makes each such view a view of the bytes' own buffer
 * (copying only a misaligned one): a 3-byte `Uint8Array` beside a 1.6 MB
 * `Float64Array` in a received result kept the whole 1.6 MB message
 * allocated for as long as it lived, once the large array was let go of,
 * while sizeof counted 3 bytes (dask/distributed#8308 is Dask's issue of the
 * same). The rule is the one a received message's top-level arrays follow
 * (`clonedBytes.ts`): a view that fills most of its buffer, as a value's one
 * large array does, is still read in place, not copied.
 */

import { DefaultDeserializer } from "node:v8";

/**
 * Bytes beyond a view's own that may stay allocated behind it: more, and the
 * view is copied out of its buffer (see {@link keepsTooMuch}).
 */
export const MAX_KEPT_BEHIND_BYTES = 4096;

/**
 * True if `view` keeps too much of a buffer not its own allocated: more than
 * as much again as its own bytes, plus {@link MAX_KEPT_BEHIND_BYTES}. The
 * allowance is added, not the larger of the two taken: the bytes also hold
 * a message's or a value's framing, so each of two arrays of one size, which
 * together fill their bytes, keeps the other's and a few bytes more behind
 * it, and was copied, both, for nothing (two 8 MB arrays: 16 MB copied).
 */
export function keepsTooMuch(view: ArrayBufferView): boolean {
  const behind = view.buffer.byteLength - view.byteLength;
  return behind > view.byteLength + MAX_KEPT_BEHIND_BYTES;
}

/** `view` in a buffer of its own: the same class, the same bytes. */
function copied(view: ArrayBufferView): ArrayBufferView {
  // A new ArrayBuffer: the deserializer reads no view onto shared memory.
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice().buffer;
  if (Buffer.isBuffer(view)) return Buffer.from(bytes);
  if (view instanceof DataView) return new DataView(bytes);
  const Ctor = view.constructor as new (buffer: ArrayBuffer) => ArrayBufferView;
  return new Ctor(bytes);
}

/** Node's deserializer, with views that keep too much of the bytes copied out of them. */
class OwningDeserializer extends DefaultDeserializer {
  // Node's DefaultDeserializer reads typed arrays, Buffers and DataViews here.
  _readHostObject(): unknown {
    const read = (
      DefaultDeserializer.prototype as unknown as { _readHostObject(): unknown }
    )._readHostObject.call(this);
    return ArrayBuffer.isView(read) && keepsTooMuch(read) ? copied(read) : read;
  }
}

/** What `v8.deserialize(bytes)` returns, with no small view keeping `bytes` allocated. */
export function deserializeOwned(bytes: Uint8Array): unknown {
  const d = new OwningDeserializer(bytes);
  d.readHeader();
  return d.readValue();
}
