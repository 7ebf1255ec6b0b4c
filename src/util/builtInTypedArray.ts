/**
 * Typed arrays of a subclass (`class Bytes extends Uint8Array`) as the built-in
 * class they extend. msgpackr writes a typed array with a code for its class
 * and has none for a subclass: it wrote one no reader knows, so the frame was
 * refused whole as malformed. In process the same value kept its class. As
 * the built-in, it means the same on every path, as a subclass of `Map` or
 * `Array` among task arguments does.
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

const PROTOTYPES: readonly object[] = TYPED_ARRAYS.map((c) => c.prototype);

/**
 * `v` itself if it is of a built-in typed array class (or a `Buffer`, or no typed
 * array); else a view of the same memory of the built-in class it extends. A
 * typed array of another realm, whose prototypes are not these, is `v` itself.
 */
export function builtInTypedArray<V extends ArrayBufferView>(v: V): V | ArrayBufferView {
  let proto = Object.getPrototypeOf(v) as object | null;
  if (proto === null || PROTOTYPES.includes(proto) || Buffer.isBuffer(v)) return v;
  while (proto !== null) {
    const i = PROTOTYPES.indexOf(proto);
    if (i >= 0) {
      const view = v as unknown as { length: number };
      return new TYPED_ARRAYS[i](v.buffer as ArrayBuffer, v.byteOffset, view.length);
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return v;
}
