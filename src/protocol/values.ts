/**
 * The rule for values that are copied with the structured-clone algorithm
 * (task results, scattered values, actor arguments and results): they must be
 * data, so that they mean the same whichever path they take. Between threads
 * and over TCP they are `v8.serialize`d, which keeps data but turns an
 * instance of a class into a plain object of its own fields (`{}` for one that
 * keeps its state in private fields, such as a `URL`); in process (the inline
 * executor, an in-process cluster) the same value would be passed by reference
 * with its prototype. Rather than lose the prototype on some paths only, every
 * path refuses what is not data, with the path of the offender.
 *
 * Data: primitives; arrays and plain objects (of any realm); `Map`s and `Set`s
 * (their keys and members are data too); `Date`, `RegExp`, errors, typed
 * arrays, `DataView`, `Buffer`, `ArrayBuffer`, boxed primitives (an error's
 * `cause`, which the clone carries, must be data too); actor handles
 * and refs (they travel as their {@link ActorRef}). Cycles and shared references
 * are data (the structured clone keeps them). Not data: functions, symbols,
 * instances of other classes (subclasses of `Map`, `Date`, … too), proxies,
 * `SharedArrayBuffer`s (their memory cannot be shared with another process),
 * detached `ArrayBuffer`s and views of them, an error its own cause refers back to, and nesting deeper than
 * {@link MAX_ARG_DEPTH} levels.
 */

import { types } from "node:util";
import { mapEntries, setValues } from "../util/collectionEntries.ts";
import { isActorRef } from "./actors.ts";
import { MAX_ARG_DEPTH } from "./messagesTaskSpec.ts";

/** What data is, for error messages. */
export const DATA_KINDS =
  "primitives, arrays, plain objects, Map, Set, Date, RegExp, errors, typed arrays, Buffer, ArrayBuffer";

/** A value that is not data, where it was found: its path from the top, innermost first. */
interface Found {
  readonly path: (number | string)[];
  readonly what: string;
  /** What a getter threw, when the value could not be read (see {@link unreadableField}). */
  readonly unreadable?: { readonly cause: unknown };
}

/** How a getter's error is said, as the client's walks say it (`client/readField.ts`). */
const GETTER_THREW = "a getter threw";

/** `err`, thrown reading a value, as an error message says it. */
function thrownText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * A field whose getter threw `err`: found, at the field, as the client's walks
 * of a call's values report it (`args[0].a cannot be read (a getter threw):
 * Error: boom`), the error kept for the caller's `cause`.
 */
function unreadableField(seg: number | string, err: unknown): Found {
  return {
    path: [seg],
    what: `cannot be read (${GETTER_THREW}): ${thrownText(err)}`,
    unreadable: { cause: err },
  };
}

/** The prototypes of this realm's data classes; another realm's are recognised by {@link isNativeProto}. */
const INTRINSIC_PROTOS: ReadonlySet<unknown> = new Set<unknown>([
  Array.prototype,
  Map.prototype,
  Set.prototype,
  Date.prototype,
  RegExp.prototype,
  ArrayBuffer.prototype,
  DataView.prototype,
  Buffer.prototype,
  Int8Array.prototype,
  Uint8Array.prototype,
  Uint8ClampedArray.prototype,
  Int16Array.prototype,
  Uint16Array.prototype,
  Int32Array.prototype,
  Uint32Array.prototype,
  Float32Array.prototype,
  Float64Array.prototype,
  BigInt64Array.prototype,
  BigUint64Array.prototype,
  Number.prototype,
  String.prototype,
  Boolean.prototype,
  BigInt.prototype,
]);

const fnToString = Function.prototype.toString;

/**
 * True if `proto` is a built-in class's prototype (of this realm or of a `vm`
 * context), not a subclass's: the structured clone makes a subclass's instance
 * one of the built-in class, which would lose the subclass's methods.
 */
function isNativeProto(proto: object): boolean {
  if (INTRINSIC_PROTOS.has(proto)) return true;
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && /\{\s*\[native code\]\s*\}$/.test(fnToString.call(ctor));
}

/** An object of `Object.prototype` or none, of this realm or another. */
function isPlainProto(proto: object | null): boolean {
  if (proto === null || proto === Object.prototype) return true;
  if (Object.getPrototypeOf(proto) !== null) return false;
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && ctor.name === "Object";
}

/** The name of `proto`'s class, for the error. */
function className(proto: object | null): string {
  const ctor = proto === null ? undefined : Object.getOwnPropertyDescriptor(proto, "constructor");
  const name = (ctor?.value as { name?: unknown } | undefined)?.name;
  return typeof name === "string" && name !== "" ? name : "object with a prototype";
}

function classInstance(proto: object | null, what = className(proto)): Found {
  return {
    path: [],
    what: `is a ${what} (an instance of a class: it would arrive as a plain object of its own fields, without its prototype and methods)`,
  };
}

/**
 * `v`, of a subclass `proto` of a built-in class: a clone keeps the nearest
 * built-in class (an `Array`, a `Map`, a `Date`) and drops the rest, not its
 * fields as for a class of its own.
 */
function builtInSubclass(v: object, proto: object | null): Found {
  let base = proto;
  while (base !== null && !isNativeProto(base)) base = Object.getPrototypeOf(base) as object | null;
  // No built-in prototype left (one set to null): the class its internal slots make it.
  const baseName = base === null ? Object.prototype.toString.call(v).slice(8, -1) : className(base);
  return {
    path: [],
    what: `is a ${className(proto)} (a subclass of ${baseName}: it would arrive as a plain ${baseName}, without its prototype and methods)`,
  };
}

function within(found: Found, seg: number | string): Found {
  found.path.push(seg);
  return found;
}

/** The state of one check. */
interface Walk {
  /** The containers already checked. */
  readonly seen: Set<object>;
  /** See {@link ValueCheck.holdsBuffers}. */
  holdsBuffers: boolean;
  /** The errors whose cause is being checked (see {@link checkErrorCause}). */
  readonly errorsOpen: Set<object>;
}

/**
 * Whether `b` is detached (its memory transferred to another thread): the
 * clone refuses it, while the inline executor kept it, so that a task returning
 * one succeeded and every fetch of its result failed. Node 20 has no
 * `ArrayBuffer.prototype.detached`; only an empty buffer may be one, and
 * `slice` throws on a detached one.
 */
function isDetached(b: ArrayBufferLike): boolean {
  if (b.byteLength !== 0 || types.isSharedArrayBuffer(b)) return false;
  try {
    b.slice(0, 0);
    return false;
  } catch {
    return true;
  }
}

/** Why the object `v` is not data, or null. */
function checkObject(v: object, depth: number, walk: Walk): Found | null {
  // Before anything reads it: a Proxy's traps may answer anything, and a clone refuses it.
  if (types.isProxy(v)) return { path: [], what: "is a Proxy, which cannot be cloned" };
  const proto = Object.getPrototypeOf(v) as object | null;
  const isArray = Array.isArray(v);
  let kind: "array" | "object" | "map" | "set";
  if (isArray) {
    if (proto !== Array.prototype && (proto === null || !isNativeProto(proto))) {
      return builtInSubclass(v, proto);
    }
    kind = "array";
  } else if (isPlainProto(proto)) {
    kind = "object";
  } else if (types.isMap(v) || types.isSet(v)) {
    if (proto === null || !isNativeProto(proto)) {
      return builtInSubclass(v, proto);
    }
    kind = types.isMap(v) ? "map" : "set";
  } else if (types.isNativeError(v)) {
    // An error of any class is data: its message and stack travel (not a subclass's name).
    return checkErrorCause(v as Error, depth, walk);
  } else if (types.isSharedArrayBuffer(v)) {
    return {
      path: [],
      what: "is a SharedArrayBuffer, whose memory cannot be shared with another thread or process: send a copy (new Uint8Array(shared).slice())",
    };
  } else if (types.isSymbolObject(v)) {
    return { path: [], what: "is a symbol (boxed)" };
  } else if (
    types.isArrayBufferView(v) ||
    types.isArrayBuffer(v) ||
    types.isDate(v) ||
    types.isRegExp(v) ||
    types.isBoxedPrimitive(v)
  ) {
    if (proto !== null && (isNativeProto(proto) || Buffer.isBuffer(v))) {
      const memory = types.isArrayBuffer(v) ? v : types.isArrayBufferView(v) ? v.buffer : null;
      if (memory !== null && isDetached(memory)) {
        return {
          path: [],
          what: `is ${types.isArrayBuffer(v) ? "an ArrayBuffer" : "a view of an ArrayBuffer"} whose memory was transferred away (detached), which cannot be cloned`,
        };
      }
      if (
        types.isArrayBufferView(v) &&
        (Buffer.isBuffer(v) || types.isSharedArrayBuffer(v.buffer))
      ) {
        walk.holdsBuffers = true;
      }
      return null;
    }
    return builtInSubclass(v, proto);
  } else {
    // An actor handle travels as its ActorRef (a plain ref is a plain object).
    if (isActorRef(v)) return null;
    if (v instanceof Map || v instanceof Set) {
      // Object.create(Map.prototype): said as the argument walk says it (taskArgs.ts).
      const name = v instanceof Map ? "Map" : "Set";
      return {
        path: [],
        what: `is a fake ${name} (an object inheriting its methods, with no contents to read)`,
      };
    }
    return classInstance(proto);
  }
  const seen = walk.seen;
  // A cycle, or a shared reference checked already. An array or object is
  // remembered only once it is found to hold an object: no cycle goes through
  // one that holds none, and checking it again where it is shared costs no
  // more than its values, while remembering every one of many small rows (a
  // result of 100,000 of them) cost as much as cloning them.
  if (seen.has(v)) return null;
  if (depth >= MAX_ARG_DEPTH) {
    return {
      path: [],
      what: `is nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
    };
  }
  switch (kind) {
    case "array": {
      const a = v as unknown[];
      let remembered = false;
      for (let i = 0; i < a.length; i++) {
        let item: unknown;
        try {
          item = a[i];
        } catch (err) {
          return unreadableField(i, err);
        }
        const t = typeof item;
        if (t !== "object" && t !== "function" && t !== "symbol") continue;
        if (t === "object" && item !== null && !remembered) {
          seen.add(a);
          remembered = true;
        }
        const found = check(item, depth + 1, walk);
        if (found !== null) return within(found, i);
      }
      return null;
    }
    case "object": {
      const o = v as Record<string, unknown>;
      let remembered = false;
      for (const k of Object.keys(o)) {
        let item: unknown;
        try {
          item = o[k];
        } catch (err) {
          return unreadableField(k, err);
        }
        if (typeof item === "object" && item !== null && !remembered) {
          seen.add(o);
          remembered = true;
        }
        const found = check(item, depth + 1, walk);
        if (found !== null) return within(found, k);
      }
      return null;
    }
    case "map": {
      seen.add(v);
      let i = 0;
      // Its entries as the clone reads them, not by its own iterator (see collectionEntries.ts).
      for (const [k, item] of mapEntries(v as Map<unknown, unknown>)) {
        const found = check(k, depth + 1, walk);
        if (found !== null) return within(found, `<key ${i}>`);
        const inValue = check(item, depth + 1, walk);
        if (inValue !== null) return within(inValue, `<value ${i}>`);
        i++;
      }
      return null;
    }
    case "set": {
      seen.add(v);
      let i = 0;
      for (const item of setValues(v as Set<unknown>)) {
        const found = check(item, depth + 1, walk);
        if (found !== null) return within(found, `<member ${i}>`);
        i++;
      }
      return null;
    }
  }
}

/**
 * Why the `cause` of error `e` is not data, or null. The structured clone
 * carries an error's `cause` (not its other fields), so it is held to the same
 * rules. And V8 writes an error whose cause refers back to it (`e.cause = e`,
 * `e.cause = { e }`) but cannot read it back ("Unable to deserialize cloned
 * data": it knows the error only once its cause is read), so such a value failed
 * where it arrived, closing the connection it came on.
 */
function checkErrorCause(e: Error, depth: number, walk: Walk): Found | null {
  if (walk.errorsOpen.has(e)) {
    return {
      path: [],
      what: "is an error its own cause refers back to, which the structured clone writes but cannot read back",
    };
  }
  if (walk.seen.has(e)) return null;
  walk.seen.add(e);
  const cause = Object.getOwnPropertyDescriptor(e, "cause");
  if (cause === undefined || !("value" in cause)) return null;
  if (depth >= MAX_ARG_DEPTH) {
    return {
      path: [],
      what: `is nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
    };
  }
  walk.errorsOpen.add(e);
  const found = check(cause.value, depth + 1, walk);
  walk.errorsOpen.delete(e);
  return found === null ? null : within(found, "cause");
}

function check(v: unknown, depth: number, walk: Walk): Found | null {
  switch (typeof v) {
    case "object":
      return v === null ? null : checkObject(v, depth, walk);
    case "function":
      return { path: [], what: "is a function" };
    case "symbol":
      return { path: [], what: "is a symbol" };
    default:
      return null;
  }
}

/** `root` followed by `path` (innermost first): `result.rows[2].when`. */
function formatFound(root: string, path: readonly (number | string)[]): string {
  let out = root;
  for (let i = path.length - 1; i >= 0; i--) {
    const seg = path[i];
    out += typeof seg === "number" ? `[${seg}]` : seg.startsWith("<") ? ` ${seg}` : `.${seg}`;
  }
  return out;
}

/** What {@link checkValue} found. */
export interface ValueCheck {
  /** Why the value is not data, or null (see {@link valueProblem}). */
  readonly problem: string | null;
  /**
   * When the problem is that the value could not be read (a getter threw):
   * what was thrown, for the caller's error to keep as its `cause`; else null.
   */
  readonly unreadable: { readonly cause: unknown } | null;
  /**
   * It holds a `Buffer` or a view of a `SharedArrayBuffer`, which
   * `structuredClone` would not copy as the wire does (it makes a `Buffer` a
   * `Uint8Array` and shares the memory of the other); false if it holds neither.
   */
  readonly holdsBuffers: boolean;
}

const DATA: ValueCheck = { problem: null, unreadable: null, holdsBuffers: false };

/**
 * Whether `value` is data (see the module's comment): if not, why, as
 * `<root><path> is a …` (`result.p is a Point (an instance of a class: …)`),
 * where `root` names the value (`result`, `args[1]`). Never throws: a field
 * whose getter throws is reported as unreadable, at its place
 * (`result.a cannot be read (a getter threw): Error: boom`), with what it threw.
 */
export function checkValue(value: unknown, root: string): ValueCheck {
  // Primitives, the most common results, without a Set.
  if (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol") {
    return DATA;
  }
  const walk: Walk = { seen: new Set(), holdsBuffers: false, errorsOpen: new Set() };
  let found: Found | null;
  try {
    found = check(value, 0, walk);
  } catch (err) {
    // Not a field's getter (each is read in a try of its own): a class's `name`, say.
    return {
      problem: `${root} cannot be read: ${thrownText(err)}`,
      unreadable: { cause: err },
      holdsBuffers: walk.holdsBuffers,
    };
  }
  return {
    problem: found === null ? null : `${formatFound(root, found.path)} ${found.what}`,
    unreadable: found?.unreadable ?? null,
    holdsBuffers: walk.holdsBuffers,
  };
}

/** {@link checkValue}'s problem alone: why `value` is not data, or null. */
export function valueProblem(value: unknown, root: string): string | null {
  return checkValue(value, root).problem;
}
