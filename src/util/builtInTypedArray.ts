/**
 * Typed arrays of a subclass (`class Bytes extends Uint8Array`) or of another
 * realm as this realm's built-in class they are made of. msgpackr writes a
 * typed array with a code for its class: it has none for a subclass and wrote
 * one no reader knows, so the frame was refused whole as malformed; another
 * realm's it wrote as a plain object of its indexes. In process the same value
 * kept its class. As the built-in, it means the same on every path, as a
 * subclass of `Map` or `Array` among task arguments does.
 */

/** The built-in typed array classes, in the order the wire's kind bytes number them. */
export const TYPED_ARRAYS = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as const;

/** The intrinsic getters of every typed array, which no subclass or realm changes. */
const TYPED_ARRAY_PROTOTYPE = Object.getPrototypeOf(Int8Array.prototype) as object;
function intrinsicGetter(name: string | symbol): (this: unknown) => unknown {
  const get = Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTOTYPE, name)?.get;
  if (get === undefined) throw new Error(`no %TypedArray%.prototype getter ${String(name)}`);
  return get;
}
/** The built-in class's name of a typed array of any realm or subclass; undefined for anything else. */
const kindOf = intrinsicGetter(Symbol.toStringTag);
const bufferOf = intrinsicGetter("buffer");
const byteOffsetOf = intrinsicGetter("byteOffset");
const lengthOf = intrinsicGetter("length");

const BY_NAME: ReadonlyMap<unknown, (typeof TYPED_ARRAYS)[number]> = new Map(
  TYPED_ARRAYS.map((c) => [c.name, c]),
);

/**
 * `v` itself if it is a typed array of one of this realm's built-in classes (a
 * `Buffer` too), or no typed array (a `DataView`); else a view of the same memory
 * of this realm's built-in class it is made of: a subclass's, or another realm's
 * (a `vm` context's), which msgpackr wrote as a plain object of its indexes.
 */
export function builtInTypedArray<V extends ArrayBufferView>(v: V): V | ArrayBufferView {
  const ctor = BY_NAME.get(kindOf.call(v));
  if (ctor === undefined || Object.getPrototypeOf(v) === ctor.prototype || Buffer.isBuffer(v)) {
    return v;
  }
  return new ctor(
    bufferOf.call(v) as ArrayBuffer,
    byteOffsetOf.call(v) as number,
    lengthOf.call(v) as number,
  );
}
