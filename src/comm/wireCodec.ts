/**
 * The TCP wire encoding of one message: MessagePack through msgpackr.
 *
 * - `useRecords: false`: plain objects are standard msgpack maps and arrays
 *   are arrays, so ordinary messages are readable by any msgpack library.
 * - `moreTypes: true`: msgpackr's extensions carry `Set`s, typed arrays,
 *   `ArrayBuffer`s, `BigInt`s, `Error`s (name, message, cause) and `RegExp`s;
 *   `Date`s use the standard timestamp extension, `undefined` ext 0.
 * - A `Map` (which msgpackr would write as a plain msgpack map, decoded as an
 *   object) is written as extension 0x6d (`'m'`) tagging the array of its
 *   entries, so it comes back a `Map` with its keys of any type.
 * - No structured clone: no cycles, no shared references (a shared object is
 *   written twice). A cycle, a function or a symbol makes encoding fail with a
 *   `SerializationError` (msgpackr would silently drop functions), in an
 *   error's `cause` too (msgpackr writes an error as `[name, message, cause]`).
 * - Class instances travel as plain objects of their own enumerable fields, or
 *   as what their `toJSON` returns when they have one (msgpackr calls it).
 * - `-0` (which msgpackr would write as the integer 0) is written as extension
 *   0x7a (`'z'`), so that it comes back `-0`.
 * - Holes of sparse arrays come back `undefined`.
 * - A {@link ClonedValue} is extension 0x76 (`'v'`) holding the index of an
 *   out-of-band buffer, sent after the payload rather than copied into it (as
 *   Dask sends frames): the bytes of `v8.serialize` of its value, so that task
 *   values keep the structured-clone algorithm's fidelity (cycles, shared
 *   references, holes); or, for a typed array, `Buffer` or `ArrayBuffer`, its
 *   raw bytes and a kind byte, read in place on arrival when aligned.
 * - A typed array, `Buffer` or `ArrayBuffer` (exactly those classes) of at
 *   least {@link OUT_OF_BAND_MIN_BYTES} anywhere else (a large task argument)
 *   is extension 0x62 (`'b'`): an out-of-band buffer of its raw bytes, as a
 *   cloned one, but decoding as the array itself. Encoding does not copy it;
 *   decoding reads it in place when aligned (a view of the received message,
 *   as msgpackr decodes a `Buffer`), so that a large argument is copied neither
 *   into the message nor out of it, at every hop.
 * - Decoding with `forward` (the scheduler's comms) makes of extension 0x62,
 *   and of 0x76 holding raw bytes, a {@link ForwardedBytes} or
 *   {@link ForwardedClonedValue}: the buffer's pieces as they arrived, checked
 *   but not joined nor read, which encoding writes back as the same extension.
 * - Decoding a map key `"__proto__"` yields `"__proto_"` (msgpackr's guard; the
 *   client refuses such keys before they reach the wire).
 * - Decoded strings are copies of their own text, not slices of the message's
 *   (see `ownStrings.ts`), so that a key kept for long keeps nothing else.
 */

import { addExtension, Packr, Unpackr } from "msgpackr";
import { builtInTypedArray } from "../util/builtInTypedArray.ts";
import { isMapObject, isSetObject } from "../util/collectionEntries.ts";
import { type ActiveCodec, activeCodec, withActiveCodec } from "./activeCodec.ts";
import { CachedClonedValue } from "./cachedClonedValue.ts";
import { clonedBytes, rawBytesProblem, rawKind, valueOfClonedBytes } from "./clonedBytes.ts";
import { ClonedValue } from "./clonedValue.ts";
import { SerializationError } from "./errors.ts";
import {
  type ForwardedBuffer,
  ForwardedBytes,
  ForwardedClonedValue,
  isForwarded,
} from "./forwardedBytes.ts";
import { ownString, ownStrings } from "./ownStrings.ts";
import { UnreadableValueError } from "./unreadableValue.ts";

/** Extension type of a `Map`. */
export const MAP_EXTENSION_TYPE = 0x6d;

/** Extension type of `-0`. */
export const NEGATIVE_ZERO_EXTENSION_TYPE = 0x7a;

/** Extension type of a {@link ClonedValue}. */
export const CLONED_VALUE_EXTENSION_TYPE = 0x76;

/** Extension type of a large typed array, `Buffer` or `ArrayBuffer` sent out of band. */
export const OUT_OF_BAND_BYTES_EXTENSION_TYPE = 0x62;

/** Extension type of an `Error` (msgpackr's own, 0x65, carries neither stack nor a missing cause). */
export const ERROR_EXTENSION_TYPE = 0x45;

/**
 * From this many bytes a typed array, `Buffer` or `ArrayBuffer` anywhere in a
 * message (a task's argument) is sent as an out-of-band buffer rather than
 * copied into the payload (see {@link encodeMessage}).
 */
export const OUT_OF_BAND_MIN_BYTES = 64 * 1024;

/**
 * One out-of-band buffer: its bytes in one piece, or, as a forwarding comm
 * received it or sends it on, in the several pieces it arrived in.
 */
export type OutOfBandBuffer = Uint8Array | readonly Uint8Array[];

/** The out-of-band buffers of the message being encoded (encoding is synchronous). */
let encoding: OutOfBandBuffer[] | null = null;
/** The out-of-band buffers of the message being decoded. */
let decoding: readonly OutOfBandBuffer[] = [];
/** Whether the message being decoded forwards its raw out-of-band buffers (see {@link decodeMessage}). */
let forwarding = false;
/** The first error reading a value of the message being decoded (see {@link UnreadableValueError}). */
let unreadable: Error | null = null;

/**
 * This copy's handling of out-of-band buffers, which the extensions registered
 * by any copy of weft in the thread hand their work to while this copy encodes
 * or decodes a message (see `activeCodec.ts`).
 */
const thisCodec: ActiveCodec = { outOfBandRef, unpackBytes, unpackClonedValue };

/** Extension 0x76, read by the copy at work. */
function unpackClonedValueOfActive(ref: Buffer): unknown {
  return activeCodec(thisCodec).unpackClonedValue(ref);
}

/** Extension 0x62, read by the copy at work. */
function unpackBytesOfActive(ref: Buffer): unknown {
  return activeCodec(thisCodec).unpackBytes(ref);
}

/**
 * What `read` reads of the message being decoded; null if it throws, the error
 * kept in {@link unreadable}: the rest of the message is still decoded, so
 * that its envelope (a request's id) can be read.
 */
function readValue(read: () => unknown): unknown {
  try {
    return read();
  } catch (err) {
    unreadable ??= err instanceof Error ? err : new Error(String(err));
    return null;
  }
}

/** The bytes of `b` in one piece (a copy if it is in several). */
function contiguous(b: OutOfBandBuffer): Uint8Array {
  if (!Array.isArray(b)) return b as Uint8Array;
  const pieces = b as readonly Uint8Array[];
  return pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
}

/**
 * `b` as a forwarded buffer of class `Forwarded` (raw bytes of kind `kind`), once
 * checked that the receiver it goes on to can read them.
 */
function forwarded<T extends ForwardedBuffer>(
  Forwarded: new (pieces: readonly Uint8Array[], kind: number) => T,
  b: OutOfBandBuffer,
  kind: number,
): T {
  const f = new Forwarded(Array.isArray(b) ? b : [b as Uint8Array], kind);
  const problem = rawBytesProblem(kind, f.byteLength);
  if (problem !== null) throw new Error(problem);
  return f;
}

/** Write the reference to out-of-band buffer `b` (its index, and its kind unless null). */
function outOfBandRef(b: OutOfBandBuffer, kind: number | null): Buffer {
  if (encoding === null) throw new Error("out-of-band buffers are encoded only by encodeMessage");
  const ref = Buffer.allocUnsafe(kind === null ? 4 : 5);
  ref.writeUInt32BE(encoding.push(b) - 1, 0);
  if (kind !== null) ref[4] = kind;
  return ref;
}

function unpackClonedValue(ref: Buffer): unknown {
  return readValue(() => readClonedValue(ref));
}

function readClonedValue(ref: Buffer): ClonedValue | ForwardedClonedValue {
  const i = ref.length === 4 || ref.length === 5 ? ref.readUInt32BE(0) : -1;
  const bytes = decoding[i];
  if (bytes === undefined) throw new Error(`no out-of-band buffer ${i} for a cloned value`);
  const kind = ref.length === 5 ? ref[4] : null;
  // Serialized bytes are read here even when forwarding: a malformed value must
  // end the connection it came on, not the receiver's connection to this process.
  if (forwarding && kind !== null) {
    return forwarded(ForwardedClonedValue, bytes, kind);
  }
  return new ClonedValue(valueOfClonedBytes(contiguous(bytes), kind));
}

addExtension({
  Class: ClonedValue,
  type: CLONED_VALUE_EXTENSION_TYPE,
  pack(v: ClonedValue): Buffer {
    const { bytes, kind } = v instanceof CachedClonedValue ? v.clonedBytes() : clonedBytes(v.value);
    return activeCodec(thisCodec).outOfBandRef(bytes, kind);
  },
  unpack: unpackClonedValueOfActive,
});

/**
 * Write what a forwarding decoder made of extension `type` back as that
 * extension, its pieces as one out-of-band buffer (see `forwardedBytes.ts`).
 */
function addForwardedExtension(
  Class: typeof ForwardedBytes | typeof ForwardedClonedValue,
  type: number,
  unpack: (ref: Buffer) => unknown,
): void {
  addExtension({
    Class,
    type,
    pack(f: ForwardedBuffer): Buffer {
      return activeCodec(thisCodec).outOfBandRef(f.pieces, f.kind);
    },
    unpack,
  });
}

addForwardedExtension(ForwardedClonedValue, CLONED_VALUE_EXTENSION_TYPE, unpackClonedValueOfActive);

/** A large typed array, `Buffer` or `ArrayBuffer` on its way to the wire (see {@link OUT_OF_BAND_MIN_BYTES}). */
class WireBytes {
  constructor(readonly value: ArrayBufferView | ArrayBuffer) {}
}

function unpackBytes(ref: Buffer): unknown {
  return readValue(() => readBytes(ref));
}

function readBytes(ref: Buffer): unknown {
  const i = ref.length === 5 ? ref.readUInt32BE(0) : -1;
  const bytes = decoding[i];
  if (bytes === undefined) throw new Error(`no out-of-band buffer ${i} for a byte array`);
  if (forwarding) return forwarded(ForwardedBytes, bytes, ref[4]);
  return valueOfClonedBytes(contiguous(bytes), ref[4]);
}

addExtension({
  Class: WireBytes,
  type: OUT_OF_BAND_BYTES_EXTENSION_TYPE,
  pack(w: WireBytes): Buffer {
    const { bytes, kind } = clonedBytes(w.value);
    if (kind === null) throw new Error("out-of-band bytes of a value not sent raw");
    return activeCodec(thisCodec).outOfBandRef(bytes, kind);
  },
  unpack: unpackBytesOfActive,
});

addForwardedExtension(ForwardedBytes, OUT_OF_BAND_BYTES_EXTENSION_TYPE, unpackBytesOfActive);

/** `-0` on its way to the wire. */
class WireNegativeZero {}
const NEGATIVE_ZERO = new WireNegativeZero();

addExtension({
  Class: WireNegativeZero,
  type: NEGATIVE_ZERO_EXTENSION_TYPE,
  write(): null {
    return null;
  },
  read(): number {
    return -0;
  },
});

/** The errors rebuilt as their own class, by name: those the structured clone rebuilds. */
const BUILT_IN_ERRORS: ReadonlyMap<string, ErrorConstructor> = new Map(
  [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError].map((c) => [
    c.name,
    c,
  ]),
);

/**
 * An error as `[name, message, stack, errors, cause?]`: its stack, which
 * msgpackr's own encoding dropped (the receiver's was msgpackr's decoding
 * frames), and its cause only if it has one (msgpackr's gave every error an
 * own `cause`, undefined), as the structured clone carries them on the other
 * paths; `errors` an `AggregateError`'s (null for others). A name of no
 * built-in error gives an `Error` with that name, as msgpackr's did.
 */
addExtension({
  Class: Error,
  type: ERROR_EXTENSION_TYPE,
  write(e: Error): unknown[] {
    const stack = typeof e.stack === "string" ? e.stack : null;
    const errors = e instanceof AggregateError ? e.errors : null;
    // Strings, whatever code set them to: the reader refuses anything else, and with
    // it the whole message the error was in.
    const data: unknown[] = [String(e.name), String(e.message), stack, errors];
    const cause = Object.getOwnPropertyDescriptor(e, "cause");
    if (cause !== undefined) data.push("value" in cause ? cause.value : cause.get?.call(e));
    return data;
  },
  read(data: unknown): Error {
    if (
      !Array.isArray(data) ||
      (data.length !== 4 && data.length !== 5) ||
      typeof data[0] !== "string" ||
      typeof data[1] !== "string" ||
      (data[2] !== null && typeof data[2] !== "string") ||
      (data[3] !== null && !Array.isArray(data[3]))
    ) {
      throw new Error("malformed Error extension: expected [name, message, stack, errors, cause?]");
    }
    const [name, message, stack, errors] = data as [
      string,
      string,
      string | null,
      unknown[] | null,
    ];
    const options = data.length === 5 ? { cause: data[4] } : undefined;
    let e: Error;
    if (errors !== null) {
      e = new AggregateError(errors, message, options);
    } else {
      const builtIn = BUILT_IN_ERRORS.get(name);
      e = builtIn === undefined ? new Error(message, options) : new builtIn(message, options);
      if (builtIn === undefined) e.name = name;
    }
    if (stack === null) delete e.stack;
    else Object.defineProperty(e, "stack", { value: stack, writable: true, configurable: true });
    return e;
  },
});

/** A `Map` on its way to the wire: its entries, flattened `[k0, v0, k1, v1, …]`. */
class WireMap {
  constructor(readonly flat: unknown[]) {}
}

addExtension({
  Class: WireMap,
  type: MAP_EXTENSION_TYPE,
  write(m: WireMap): unknown[] {
    return m.flat;
  },
  read(flat: unknown): Map<unknown, unknown> {
    if (!Array.isArray(flat) || flat.length % 2 !== 0) {
      throw new Error("malformed Map extension: expected an array of key/value pairs");
    }
    const out = new Map<unknown, unknown>();
    for (let i = 0; i < flat.length; i += 2) {
      const key = flat[i];
      out.set(typeof key === "string" ? ownString(key) : key, flat[i + 1]);
    }
    return out;
  },
});

const packr = new Packr({ useRecords: false, moreTypes: true, structuredClone: false });
/**
 * For messages holding an object of more than 65,535 keys (an update-graph of
 * that many tasks), which `packr` refuses: same encoding, but object sizes
 * (fixmap, map16, map32) are chosen per object, which is a little slower.
 */
const largePackr = new Packr({
  useRecords: false,
  moreTypes: true,
  structuredClone: false,
  variableMapSize: true,
});
const unpackr = new Unpackr({
  useRecords: false,
  moreTypes: true,
  mapsAsObjects: true,
  structuredClone: false,
});

/**
 * How deep a message may nest: task arguments may nest 1,000 levels
 * (`MAX_ARG_DEPTH`), and the messages carrying them add a few. msgpackr's
 * `pack` recurses once a level and ran out of stack at about 1,500 (and
 * `prepare` about 2,000 through Maps), so a deeper message must be refused
 * here, as a SerializationError, not overflow the stack: a RangeError was not
 * taken for the message's fault, and ended the whole stream it was sent on.
 */
const MAX_DEPTH = 1100;

/** Data objects the wire carries whole, without looking inside. */
function isDataLeaf(v: object): boolean {
  return (
    ArrayBuffer.isView(v) ||
    v instanceof ArrayBuffer ||
    v instanceof Date ||
    v instanceof RegExp ||
    v instanceof Error
  );
}

function isLeafObject(v: object): boolean {
  return isDataLeaf(v) || v instanceof ClonedValue || isForwarded(v);
}

/**
 * The objects other than arrays and plain objects that the wire carries as what
 * they are: typed arrays, `ArrayBuffer`, `Date`, `RegExp`, errors, `Map`, `Set`.
 * Recognised by `instanceof`, so of this realm only (another realm's `Map`
 * would travel as `{}`).
 */
export function isWireDataObject(v: object): boolean {
  return isDataLeaf(v) || isMapObject(v) || isSetObject(v);
}

/**
 * Nesting depth from which {@link prepare} looks for reference cycles. A cycle
 * nests without end, so it is still caught past this depth, while the shallow
 * objects that make up nearly every message skip the bookkeeping.
 */
const CYCLE_CHECK_DEPTH = 32;

/**
 * `v` with every `Map` replaced by a {@link WireMap}; `v` itself when there is
 * none (copy on write). Throws on functions, symbols, cycles and too deep nesting.
 */
function prepare(v: unknown, depth: number, seen: Set<object>): unknown {
  const t = typeof v;
  if (t !== "object") {
    if (v === 0 && Object.is(v, -0)) return NEGATIVE_ZERO;
    if (t === "function") throw new SerializationError(`cannot encode a function (${String(v)})`);
    if (t === "symbol") throw new SerializationError(`cannot encode a symbol (${String(v)})`);
    return v;
  }
  if (v === null) return v;
  const obj = v as object;
  // Arrays and plain objects first: they are what messages are made of.
  const isArray = Array.isArray(obj);
  let proto: unknown = null;
  if (!isArray) {
    proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null && isLeafObject(obj) && !isError(obj)) {
      // Not copied into the payload: a view of its bytes goes out as it is.
      const isView = ArrayBuffer.isView(obj);
      // A typed array's subclass as its built-in class (see builtInTypedArray.ts).
      const leaf = isView ? builtInTypedArray(obj) : obj;
      const bytes =
        isView || obj instanceof ArrayBuffer
          ? (leaf as ArrayBufferView | ArrayBuffer).byteLength
          : 0;
      return bytes >= OUT_OF_BAND_MIN_BYTES && rawKind(leaf) >= 0
        ? new WireBytes(leaf as ArrayBufferView | ArrayBuffer)
        : leaf;
    }
  }
  // The message itself is level 1: depth 0.
  if (depth >= MAX_DEPTH)
    throw new SerializationError(`cannot encode: nested deeper than ${MAX_DEPTH}`);
  const checkCycle = depth >= CYCLE_CHECK_DEPTH;
  if (checkCycle) {
    if (seen.has(obj)) throw new SerializationError("cannot encode a value with a reference cycle");
    seen.add(obj);
  }
  try {
    if (isArray) {
      const arr = obj as unknown[];
      let out: unknown[] | null = null;
      for (let i = 0; i < arr.length; i++) {
        const item = arr[i];
        const p = prepare(item, depth + 1, seen);
        if (p !== item && out === null) out = arr.slice(0, i);
        if (out !== null) out.push(p);
      }
      return out ?? obj;
    }
    if (proto !== Object.prototype && proto !== null) {
      if (isError(obj)) return prepareError(obj, depth, seen);
      if (obj instanceof Map) {
        const flat: unknown[] = [];
        for (const [k, val] of obj)
          flat.push(prepare(k, depth + 1, seen), prepare(val, depth + 1, seen));
        return new WireMap(flat);
      }
      if (obj instanceof Set) {
        let changed = false;
        const items: unknown[] = [];
        for (const item of obj) {
          const p = prepare(item, depth + 1, seen);
          if (p !== item) changed = true;
          items.push(p);
        }
        return changed ? new Set(items) : obj;
      }
    }
    const rec = obj as Record<string, unknown>;
    let out: Record<string, unknown> | null = null;
    for (const key of Object.keys(rec)) {
      const item = rec[key];
      const p = prepare(item, depth + 1, seen);
      if (p !== item && out === null) out = { ...rec };
      if (out !== null) out[key] = p;
    }
    return out ?? obj;
  } finally {
    if (checkCycle) seen.delete(obj);
  }
}

function isError(v: object): v is Error {
  return v instanceof Error;
}

/**
 * Error `e` with its `cause` prepared as any value is: msgpackr writes an error
 * as `[name, message, cause]`, packing the cause itself, which without this
 * walk went out as it was found (a Map as an object, -0 as 0, a function
 * dropped, a cycle through the cause a stack overflow). A copy when the cause
 * changed; `e` itself otherwise.
 */
function prepareError(e: Error, depth: number, seen: Set<object>): Error {
  const cause = Object.getOwnPropertyDescriptor(e, "cause");
  if (cause === undefined || !("value" in cause)) return e;
  const p = prepare(cause.value, depth + 1, seen);
  if (p === cause.value) return e;
  const copy = Object.create(Object.getPrototypeOf(e), Object.getOwnPropertyDescriptors(e));
  Object.defineProperty(copy, "cause", { ...cause, value: p });
  return copy as Error;
}

/**
 * An encoded message: the msgpack payload, and the out-of-band buffers its
 * cloned values and large byte arrays refer to (none for ordinary messages).
 */
export interface EncodedMessage {
  /** The msgpack bytes of the message. */
  readonly payload: Uint8Array;
  /** The out-of-band buffers the payload refers to, in order; empty for ordinary messages. */
  readonly buffers: readonly OutOfBandBuffer[];
}

/** Encode one message. Throws a `SerializationError` if it cannot be encoded. */
export function encodeMessage(msg: unknown): EncodedMessage {
  let prepared: unknown;
  try {
    prepared = prepare(msg, 0, new Set());
  } catch (err) {
    // A stack overflow (a value nested too deeply for where it is encoded) is the
    // message's fault like any other: the stream sending it goes on without it.
    if (err instanceof SerializationError) throw err;
    throw new SerializationError(`cannot encode message: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const buffers: OutOfBandBuffer[] = [];
  encoding = buffers;
  try {
    try {
      return { payload: withActiveCodec(thisCodec, () => packr.pack(prepared)), buffers };
    } catch (err) {
      if (!/variableMapSize/.test((err as Error).message)) throw err;
      buffers.length = 0;
      return { payload: withActiveCodec(thisCodec, () => largePackr.pack(prepared)), buffers };
    }
  } catch (err) {
    throw new SerializationError(`cannot encode message: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    encoding = null;
  }
}

/** Options of {@link decodeMessage}. */
export interface DecodeOptions {
  /**
   * Make of every large byte array (extension 0x62) and every cloned value of
   * raw bytes (0x76 with a kind) a {@link ForwardedBytes} or
   * {@link ForwardedClonedValue} holding the buffer's pieces unread (their kind
   * and length checked, so that the receiver it is sent on to can read them):
   * for a process that only passes them on. Cloned values of serialized bytes
   * are still read. Default false.
   */
  readonly forward?: boolean;
}

/**
 * Decode one message. A buffer in several pieces is joined (a copy) where a
 * value is read from it. Throws a `SerializationError` for malformed bytes: an
 * {@link UnreadableValueError}, with the message's `op` and `id`, when only a
 * value in it could not be read (a cloned value that does not deserialize).
 */
export function decodeMessage(
  payload: Uint8Array,
  buffers: readonly OutOfBandBuffer[] = [],
  options: DecodeOptions = {},
): unknown {
  decoding = buffers;
  forwarding = options.forward === true;
  unreadable = null;
  let msg: unknown;
  let failed: Error | null = null;
  try {
    msg = ownStrings(withActiveCodec(thisCodec, () => unpackr.unpack(payload)));
  } catch (err) {
    throw new SerializationError(`malformed frame: ${(err as Error).message}`, { cause: err });
  } finally {
    decoding = [];
    forwarding = false;
    failed = unreadable;
    unreadable = null;
  }
  if (failed !== null) throw new UnreadableValueError(failed, msg);
  return msg;
}
