/**
 * A copy of a value as a TCP peer would receive it, for the paths that pass
 * values by reference in process (an in-process cluster): scattered values and
 * actor arguments and results. It goes through the very functions a
 * `ClonedValue` goes through on the wire, so that in process and over TCP a
 * value arrives the same (a `Buffer` stays a `Buffer`, which `structuredClone`
 * would make a `Uint8Array`; a `SharedArrayBuffer` is refused, which
 * `structuredClone` would share), with no memory left shared with the sender.
 */

import { types } from "node:util";
import { clonedBytes, rawKind, valueOfClonedBytes } from "../comm/clonedBytes.ts";
import { SerializationError } from "../comm/errors.ts";
import { MAX_ARG_DEPTH } from "../protocol/messagesTaskSpec.ts";
import { checkValue, type ValueCheck } from "../protocol/values.ts";

/**
 * `value` after a round trip through the wire's cloned-value encoding, not
 * sharing memory with it. Throws a `SerializationError` for a value that cannot
 * be cloned, as sending it would. `check`: what `checkValue` found of `value`
 * (data); when it holds no `Buffer` and no view of shared memory, the faster
 * `structuredClone` makes the same copy (it differs from `v8.serialize` only in
 * those, and in host objects, which are not data).
 */
export function wireClone(value: unknown, check?: ValueCheck): unknown {
  // Primitives are immutable and kept exactly by the clone (strings too).
  if (typeof value !== "object" || value === null) {
    if (typeof value === "function" || typeof value === "symbol") clonedBytes(value); // throws
    return value;
  }
  if (value instanceof ArrayBuffer && Object.getPrototypeOf(value) === ArrayBuffer.prototype) {
    return value.slice(0);
  }
  if (check?.problem === null && !check.holdsBuffers && rawKind(value) < 0) {
    const copied = plainCopy(value, new Copies(), 0);
    if (copied !== NOT_PLAIN) return copied;
    try {
      return structuredClone(value);
    } catch (err) {
      throw new SerializationError(`cannot clone a value: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  const { bytes, kind } = clonedBytes(value);
  // Raw bytes are a view of the value's memory: copied, so that the clone owns its own.
  return valueOfClonedBytes(kind === null ? bytes : new Uint8Array(bytes), kind);
}

/**
 * What {@link checkedWireClone} gives: the copy, or why the value is not data
 * (with `unreadable` as `checkValue` gives it: what a getter threw, if that is why).
 */
export type CheckedClone =
  | { readonly problem: null; readonly copy: unknown }
  | {
      readonly problem: string;
      readonly unreadable: ValueCheck["unreadable"];
      readonly copy?: undefined;
    };

/**
 * `value` checked to be data (`checkValue`, whose `root` names it in the
 * problem) and copied as {@link wireClone} copies it. Plain data (primitives,
 * arrays and plain objects) is checked and copied in one walk. Throws a
 * `SerializationError` where `wireClone` does.
 */
export function checkedWireClone(value: unknown, root: string): CheckedClone {
  if (typeof value !== "object" || value === null) {
    const t = typeof value;
    if (t !== "function" && t !== "symbol") return { problem: null, copy: value };
  } else {
    let copy: unknown = NOT_PLAIN;
    try {
      copy = plainCopy(value, new Copies(), 0);
    } catch {
      // A getter threw: `checkValue` reads the value again to say where, as it
      // does over TCP, where no copy is made (a getter that throws only once
      // then gives what it gives, copied as the wire copies it).
    }
    if (copy !== NOT_PLAIN) return { problem: null, copy };
  }
  const check = checkValue(value, root);
  if (check.problem !== null) return { problem: check.problem, unreadable: check.unreadable };
  return { problem: null, copy: wireClone(value, check) };
}

/**
 * The copies {@link plainCopy} made, by original: in two arrays while they are
 * few (a `Map` made for every small value cost a tenth of an in-process actor
 * call), in a `Map` past {@link FEW_COPIES}.
 */
class Copies {
  private originals: object[] = [];
  private copies: unknown[] = [];
  private map: Map<object, unknown> | null = null;

  get(o: object): unknown {
    if (this.map !== null) return this.map.get(o);
    const i = this.originals.indexOf(o);
    return i < 0 ? undefined : this.copies[i];
  }

  set(o: object, copy: unknown): void {
    if (this.map !== null) {
      this.map.set(o, copy);
      return;
    }
    this.originals.push(o);
    this.copies.push(copy);
    if (this.originals.length > FEW_COPIES) {
      this.map = new Map(this.originals.map((x, i) => [x, this.copies[i]]));
      this.originals = [];
      this.copies = [];
    }
  }
}

const FEW_COPIES = 16;

/** What {@link plainCopy} gives for a value it does not copy. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * A copy of `v` equal to its structured clone, if `v` is made of primitives,
 * arrays of `Array.prototype` without holes or other properties, and objects
 * of `Object.prototype` (no `__proto__` key); else {@link NOT_PLAIN}. Shared
 * references and cycles are kept, as the clone keeps them (`copies` maps each
 * array and object to its copy). `structuredClone`'s fixed cost is most of a
 * small value's (1.7 µs for `{id, name, tags: [3 strings], values: [4
 * numbers]}`, against 0.16 µs walked), and it is 3 times slower on 200 rows
 * of `{i, s}` (110 µs, against 40). What it copies is data (`checkValue` would
 * find no problem in it): nesting deeper than `MAX_ARG_DEPTH` is left to it.
 */
function plainCopy(v: unknown, copies: Copies, depth: number): unknown {
  const t = typeof v;
  if (t !== "object") return t === "function" || t === "symbol" ? NOT_PLAIN : v;
  if (v === null) return v;
  const o = v as object;
  const known = copies.get(o);
  if (known !== undefined) return known;
  const proto = Object.getPrototypeOf(o);
  const isArray = proto === Array.prototype;
  if ((!isArray && proto !== Object.prototype) || types.isProxy(o)) return NOT_PLAIN;
  if (depth >= MAX_ARG_DEPTH) return NOT_PLAIN; // not data: checkValue says so
  const keys = Object.keys(o);
  if (isArray) {
    const a = o as unknown[];
    // Fewer keys than elements: holes; more: properties besides the elements.
    if (!Array.isArray(a) || keys.length !== a.length) return NOT_PLAIN;
    const out = new Array<unknown>(a.length);
    copies.set(o, out);
    for (let i = 0; i < a.length; i++) {
      const item = plainCopy(a[i], copies, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  const rec = o as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  copies.set(o, out);
  for (const k of keys) {
    if (k === "__proto__") return NOT_PLAIN; // assigning it would set the copy's prototype
    const item = plainCopy(rec[k], copies, depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[k] = item;
  }
  return out;
}
