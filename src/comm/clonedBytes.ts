/**
 * The bytes a cloned value travels as (an out-of-band buffer of a TCP
 * message): `v8.serialize`'s, which keep the structured-clone algorithm's
 * fidelity; or, for a typed array, `Buffer` or `ArrayBuffer`, its raw bytes
 * and a kind byte: no serializer copy on the way out, and read in place on the
 * way in when aligned.
 */

import { serialize } from "node:v8";
import { TYPED_ARRAYS } from "../util/builtInTypedArray.ts";
import { SerializationError } from "./errors.ts";
import { deserializeOwned, keepsTooMuch } from "./ownedDeserialize.ts";

/**
 * The typed array classes sent raw ({@link TYPED_ARRAYS}). Kind byte: 0 a
 * `Buffer`, 1 an `ArrayBuffer`, 2 + the index in that list a typed array.
 */

const BUFFER_KIND = 0;
const ARRAY_BUFFER_KIND = 1;
const FIRST_TYPED_ARRAY_KIND = 2;

/** The kind byte of a value sent raw, or -1 (exact classes only: a subclass is serialized). */
export function rawKind(v: unknown): number {
  if (typeof v !== "object" || v === null) return -1;
  if (Buffer.isBuffer(v)) return BUFFER_KIND;
  const ctor = Object.getPrototypeOf(v)?.constructor;
  if (ctor === ArrayBuffer) return ARRAY_BUFFER_KIND;
  const i = TYPED_ARRAYS.indexOf(ctor);
  return i < 0 ? -1 : FIRST_TYPED_ARRAY_KIND + i;
}

/**
 * The bytes of `value` and, if they are its raw bytes (a view, not a copy),
 * their kind; else `v8.serialize`'s bytes and null. Throws a
 * `SerializationError` for a value that cannot be cloned.
 */
export function clonedBytes(value: unknown): { bytes: Uint8Array; kind: number | null } {
  const kind = rawKind(value);
  if (kind >= 0) {
    const v = value as ArrayBufferView | ArrayBuffer;
    const bytes =
      v instanceof ArrayBuffer
        ? new Uint8Array(v)
        : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    return { bytes, kind };
  }
  try {
    return { bytes: serialize(value), kind: null };
  } catch (err) {
    throw new SerializationError(`cannot clone a value: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Why `byteLength` raw bytes of kind `kind` are not a value (an unknown kind, a
 * length that is not a whole number of elements), or null: what
 * {@link valueOfClonedBytes} would throw, told without reading the bytes.
 */
export function rawBytesProblem(kind: number, byteLength: number): string | null {
  if (kind === ARRAY_BUFFER_KIND || kind === BUFFER_KIND) return null;
  const ctor = TYPED_ARRAYS[kind - FIRST_TYPED_ARRAY_KIND];
  if (ctor === undefined) return `unknown raw value kind ${kind}`;
  return byteLength % ctor.BYTES_PER_ELEMENT === 0 ? null : `${ctor.name} of ${byteLength} bytes`;
}

/**
 * `bytes`, or a copy of them when they are a small part of their buffer
 * (`keepsTooMuch`): a value read in place from a received message keeps the
 * whole message allocated for as long as it lives. A peer's `get_data` answer
 * carries many values in one message; kept as views, the memory of all stayed
 * allocated until the last was let go of, whatever the worker spilled or
 * released meanwhile (ten fetched results of 1 MB each held a 9 MB message),
 * while the worker counted the views' bytes alone. Dask fixed the same in
 * 2023.11 (dask/distributed#8308). A value that fills most of its buffer, as a
 * message's one large array does, is still read in place: it keeps at most as
 * much again behind it. The views inside a serialized value follow the same
 * rule (`deserializeOwned`).
 */
function ownedEnough(bytes: Uint8Array): Uint8Array {
  return keepsTooMuch(bytes) ? new Uint8Array(bytes) : bytes;
}

/** The value that {@link clonedBytes} gave `bytes` and `kind` for. */
export function valueOfClonedBytes(received: Uint8Array, kind: number | null): unknown {
  if (kind === null) return deserializeOwned(received);
  const problem = rawBytesProblem(kind, received.byteLength);
  if (problem !== null) throw new Error(problem);
  // Copies are made with `new Uint8Array(bytes)`: `bytes` is usually a Buffer (a
  // view on the received frame), whose slice() is another view, not a copy.
  if (kind === ARRAY_BUFFER_KIND) return new Uint8Array(received).buffer;
  const bytes = ownedEnough(received);
  if (kind === BUFFER_KIND) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ctor = TYPED_ARRAYS[kind - FIRST_TYPED_ARRAY_KIND];
  const width = ctor.BYTES_PER_ELEMENT;
  const at = bytes.byteOffset % width === 0 ? bytes : new Uint8Array(bytes);
  return new ctor(at.buffer as ArrayBuffer, at.byteOffset, at.byteLength / width);
}
