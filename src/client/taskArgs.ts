/**
 * Preparing task arguments on the client: futures (at any depth in arrays
 * and plain objects) become task references and dependencies; values that
 * cannot travel as data (functions, symbols, reference cycles, strings that
 * are not well-formed Unicode) are refused with an error naming where they are.
 */

import { types } from "node:util";
import { isWireDataObject } from "../comm/wireCodec.ts";
import { isTaskRef, MAX_ARG_DEPTH, type TaskRef, taskRef } from "../protocol/messagesTaskSpec.ts";
import { builtInTypedArray } from "../util/builtInTypedArray.ts";
import { isMapObject, isSetObject, mapEntries, setValues } from "../util/collectionEntries.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { Actor } from "./actor.ts";
import { Future } from "./future.ts";
import { proxyContents } from "./proxyContents.ts";
import { GETTER_THREW, unreadable } from "./readField.ts";

/** Where a value sits in the arguments: built as the walk descends, formatted only for errors. */
export interface ArgPath {
  readonly parent: ArgPath | null;
  /** An array index or an object key. */
  readonly seg: number | string;
}

/** `args[0].x[2]` for a path (`root` names the top value). */
export function formatPath(path: ArgPath | null, root = "args"): string {
  const segs: (number | string)[] = [];
  for (let p = path; p !== null; p = p.parent) segs.push(p.seg);
  let out = root;
  for (let i = segs.length - 1; i >= 0; i--) {
    const seg = segs[i];
    out += typeof seg === "number" ? `[${seg}]` : `.${seg}`;
  }
  return out;
}

/**
 * What a {@link LeafReplacer} returns to keep the leaf as it is. Not `undefined`
 * (nor `null`): those are values a leaf may be replaced by, as a graph's literal
 * `null` is inlined where its key is named.
 */
export const KEEP: unique symbol = Symbol("keep the leaf");

/**
 * How a leaf is replaced: the replacement, or {@link KEEP} to keep it. Called
 * for strings, task references and futures, with where the leaf sits: its
 * container's path and its index or key (`seg`, null at the top; see
 * {@link pathOf}), so that no path is built unless an error names it.
 */
export type LeafReplacer = (
  value: string | TaskRef | Future,
  parent: ArgPath | null,
  seg: number | string | null,
) => unknown;

/** The path of the value at `seg` of the container at `parent` (null `seg`: the top). */
export function pathOf(parent: ArgPath | null, seg: number | string | null): ArgPath | null {
  return seg === null ? parent : { parent, seg };
}

/** A data object of another realm, which the wire would not carry (see `isWireDataObject`). */
function isForeignDataObject(v: object): boolean {
  return (
    types.isMap(v) ||
    types.isSet(v) ||
    types.isDate(v) ||
    types.isRegExp(v) ||
    types.isNativeError(v) ||
    types.isArrayBuffer(v)
  );
}

/**
 * An object whose prototype is null or `Object.prototype`, of this realm or
 * another (a `vm` context's plain objects travel as ours do).
 */
function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return true;
  if (Object.getPrototypeOf(proto) !== null) return false;
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && ctor.name === "Object";
}

/** True if `v` is a {@link TaskDefinition} (what `defineTask` returns). */
export function isTaskDefinition(v: unknown): v is TaskDefinition {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { name?: unknown }).name === "string" &&
    typeof (v as { fn?: unknown }).fn === "function"
  );
}

/**
 * Why a string cannot travel in a message, or null. Messages carry strings
 * as UTF-8, where a lone surrogate would silently become U+FFFD: a key would
 * no longer match (the client would wait for it forever), an argument would
 * change.
 */
export function stringProblem(s: string): string | null {
  return s.isWellFormed() ? null : "is not well-formed Unicode (it has a lone surrogate)";
}

/**
 * Why a key (of a graph, a task or an object in the arguments) cannot travel
 * in a message, or null: {@link stringProblem}, and `__proto__`, which the
 * wire codec renames (to `__proto_`) to keep decoding from setting prototypes.
 */
export function keyProblem(k: string): string | null {
  if (k === "__proto__")
    return "is __proto__, which the wire codec renames (a guard against prototype pollution)";
  return stringProblem(k);
}

/**
 * What was given instead of a task function, for the error. Not JSON.stringify
 * alone: it throws on a future (a cycle through its client) and on a bigint.
 */
function describeNotAFunction(fn: unknown): string {
  if (typeof fn === "function") return "a plain function (register it with defineTask)";
  if (fn instanceof Future) return `a future (of ${JSON.stringify(fn.key)}), not a function`;
  if (typeof fn === "bigint" || typeof fn === "symbol") return `${typeof fn} ${String(fn)}`;
  if (typeof fn === "object" && fn !== null && !Array.isArray(fn) && !isPlainObject(fn)) {
    return `a ${fn.constructor?.name ?? "object"}`;
  }
  try {
    return JSON.stringify(fn) ?? String(fn);
  } catch {
    return `${Array.isArray(fn) ? "an array" : "an object"} that cannot be shown`;
  }
}

/** The registered name of a task function given as a definition or a name. */
export function taskName(fn: TaskDefinition<TaskFunction> | string, what: string): string {
  const name = typeof fn === "string" ? fn : isTaskDefinition(fn) ? fn.name : null;
  if (name === null || name === "") {
    throw new TypeError(
      `${what}: the function must be a task definition (from defineTask) or a registered name, got ${describeNotAFunction(fn)}`,
    );
  }
  const problem = stringProblem(name);
  if (problem !== null) throw new TypeError(`${what}: the function name ${problem}`);
  return name;
}

/**
 * A copy of a data object the wire carries whole (see `isWireDataObject`): the
 * mutable ones (dates, typed arrays, buffers) are copied; a RegExp or an error
 * is shared.
 */
function copyOfData(v: object): object {
  if (v instanceof Date) return new Date(v.getTime());
  if (v instanceof ArrayBuffer) return v.slice(0);
  if (Buffer.isBuffer(v)) return Buffer.from(v); // Buffer#slice() is a view
  // Of any realm (instanceof missed another's, which then failed as 'slice is not a function').
  if (types.isDataView(v)) {
    const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
    return new DataView(bytes.buffer);
  }
  // Of the built-in class: slice() would keep a subclass, in process only (see builtInTypedArray.ts).
  if (ArrayBuffer.isView(v))
    return (builtInTypedArray(v) as unknown as { slice(): object }).slice();
  return v;
}

/**
 * Maps task arguments with one replacer (see {@link mapArgs}); reusable for
 * many values, one after the other.
 */
export class ArgMapper {
  /**
   * The arrays and objects on the way down (cycle detection); empty between
   * calls. An array: it is a few deep, and a Set emptied after every task
   * reallocates its table each time.
   */
  private readonly seen: object[] = [];
  /** How many Maps and Sets the walk is inside: their members are checked, not replaced. */
  private inCollection = 0;
  /** How many errors' causes the walk is inside: checked and copied, not replaced. */
  private inCause = 0;
  private readonly what: () => string;

  /** `root` names the top value in error messages (see {@link formatPath}). */
  constructor(
    private readonly replace: LeafReplacer,
    what: string | (() => string),
    private readonly root = "args",
  ) {
    this.what = typeof what === "string" ? () => what : what;
  }

  private pathText(path: ArgPath | null): string {
    return formatPath(path, this.root);
  }

  /** The error of a field `seg` of the container at `path` whose getter threw `err`. */
  private unreadableField(path: ArgPath | null, seg: number | string, err: unknown): TypeError {
    return unreadable(`${this.what()}: ${this.pathText({ parent: path, seg })}`, GETTER_THREW, err);
  }

  /** `value` as the replacer replaces it (itself, when it says {@link KEEP}). */
  private replaced(
    value: string | TaskRef | Future,
    parent: ArgPath | null,
    seg: number | string | null,
  ): unknown {
    const r = this.replace(value, parent, seg);
    return r === KEEP ? value : r;
  }

  /**
   * A Map's or Set's members are data by the same rules (strings, nesting,
   * classes), checked but not replaced: a future or task reference inside
   * one is refused, as Dask looks for them only in lists and dicts.
   */
  private walkCollection(
    value: Map<unknown, unknown> | Set<unknown>,
    parent: ArgPath | null,
    seg: number | string | null,
  ): unknown {
    const seen = this.seen;
    const here = pathOf(parent, seg);
    if (seen.includes(value)) {
      throw new TypeError(`${this.what()}: ${this.pathText(here)} contains a reference cycle`);
    }
    if (seen.length >= MAX_ARG_DEPTH) {
      throw new TypeError(
        `${this.what()}: ${this.root}: nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
      );
    }
    // A member's place: `args[0].<value 2>` is the value of the Map's third entry.
    // Members are checked, never replaced (no key lookup, no futures) inside one.
    const check = (member: unknown, at: string): unknown => this.walk(member, here, at, false);
    seen.push(value);
    this.inCollection++;
    try {
      let i = 0;
      // A copy (see `walk`), of copies, of what the Map or Set holds as the
      // built-in iteration reads it (see collectionEntries.ts).
      if (isMapObject(value)) {
        const out = new Map<unknown, unknown>();
        for (const [k, v] of mapEntries(value)) {
          out.set(check(k, `<key ${i}>`), check(v, `<value ${i}>`));
          i++;
        }
        return out;
      }
      const out = new Set<unknown>();
      for (const v of setValues(value)) out.add(check(v, `<member ${i++}>`));
      return out;
    } finally {
      this.inCollection--;
      seen.pop();
    }
  }

  /**
   * An error travels with its `cause` (the wire codec and the structured clone
   * both carry it), which must be data by the same rules as any argument: a
   * class instance there arrived as a plain object over TCP, a
   * `SharedArrayBuffer` as `{}`, while in process the task failed. The cause is
   * checked and copied (strings in it are not keys, futures not looked for);
   * an error without one is shared, as before.
   */
  private walkError(value: Error, parent: ArgPath | null, seg: number | string | null): Error {
    const cause = Object.getOwnPropertyDescriptor(value, "cause");
    if (cause === undefined || !("value" in cause)) return value;
    const seen = this.seen;
    const path = pathOf(parent, seg);
    if (seen.includes(value)) {
      throw new TypeError(`${this.what()}: ${this.pathText(path)} contains a reference cycle`);
    }
    seen.push(value);
    this.inCause++;
    let checked: unknown;
    try {
      checked = this.walk(cause.value, path, "cause", false);
    } finally {
      this.inCause--;
      seen.pop();
    }
    const copy = Object.create(
      Object.getPrototypeOf(value),
      Object.getOwnPropertyDescriptors(value),
    ) as Error;
    Object.defineProperty(copy, "cause", { ...cause, value: checked });
    return copy;
  }

  /**
   * A proxy is walked as its contents, read once through its traps (an
   * array's or a plain object's: an immer draft, a store's state), their
   * errors named; a proxy of anything else is refused, as its target would be.
   */
  private walkProxy(
    value: object,
    parent: ArgPath | null,
    seg: number | string | null,
    inArray: boolean,
  ): unknown {
    const here = () => `${this.what()}: ${this.pathText(pathOf(parent, seg))}`;
    if (this.seen.includes(value)) throw new TypeError(`${here()} contains a reference cycle`);
    const contents = proxyContents(value, here);
    if (contents === null) {
      throw new TypeError(
        `${here()} is a Proxy of neither an array nor a plain object; task arguments must be data (primitives, arrays, plain objects, Map, Set, Date, RegExp, errors, typed arrays, ArrayBuffer)`,
      );
    }
    this.seen.push(value);
    try {
      return this.walk(contents, parent, seg, inArray);
    } finally {
      this.seen.pop();
    }
  }

  /** `value` with leaves replaced (see {@link mapArgs}). */
  map(value: unknown): unknown {
    return this.walk(value, null, null, true);
  }

  private walk(
    value: unknown,
    parent: ArgPath | null,
    seg: number | string | null,
    inArray: boolean,
  ): unknown {
    switch (typeof value) {
      case "function":
        throw new TypeError(
          `${this.what()}: ${this.pathText(pathOf(parent, seg))} is a function; task arguments must be data`,
        );
      case "symbol":
        throw new TypeError(
          `${this.what()}: ${this.pathText(pathOf(parent, seg))} is a symbol; task arguments must be data`,
        );
      case "string": {
        const problem = stringProblem(value);
        if (problem !== null) {
          throw new TypeError(`${this.what()}: ${this.pathText(pathOf(parent, seg))} ${problem}`);
        }
        if (!inArray || this.inCollection > 0 || this.inCause > 0) return value;
        return this.replaced(value, parent, seg);
      }
      case "object":
        break;
      default:
        return value;
    }
    if (value === null) return value;
    // Before anything reads it: its traps may throw (see proxyContents).
    if (types.isProxy(value)) return this.walkProxy(value, parent, seg, inArray);
    // A handle stands for its actor task, as Dask's Actor is a TaskRef: the task
    // depends on the actor and gets a handle of its own.
    if (value instanceof Actor) return this.walk(taskRef(value.key), parent, seg, inArray);
    if (value instanceof Future || isTaskRef(value)) {
      if (this.inCause > 0) {
        throw new TypeError(
          `${this.what()}: ${this.pathText(pathOf(parent, seg))} is a ${value instanceof Future ? "future" : "task reference"} inside an error's cause, where they are not looked for: use an array or a plain object`,
        );
      }
      if (this.inCollection > 0) {
        throw new TypeError(
          `${this.what()}: ${this.pathText(pathOf(parent, seg))} is a ${value instanceof Future ? "future" : "task reference"} inside a Map or Set, where they are not looked for (as Dask looks only in lists and dicts): use an array or a plain object`,
        );
      }
      return this.replaced(value, parent, seg);
    }
    const isArray = Array.isArray(value);
    if (isMapObject(value) || isSetObject(value)) return this.walkCollection(value, parent, seg);
    if (!isArray && !isPlainObject(value)) {
      if (isWireDataObject(value)) {
        if (types.isNativeError(value)) return this.walkError(value as Error, parent, seg);
        try {
          return copyOfData(value);
        } catch (err) {
          // A detached ArrayBuffer (its memory transferred away), or a view of one.
          throw new TypeError(
            `${this.what()}: ${this.pathText(pathOf(parent, seg))} cannot be copied: ${(err as Error).message}`,
          );
        }
      }
      // Another class's instance (a URL, a class of the caller's) would arrive as a
      // different thing by each path (its own fields, `{}`, or a failed clone).
      const name = value.constructor?.name || "object with a prototype";
      const kind = isForeignDataObject(value)
        ? `${name} made in another realm (a vm context: copy it into a ${name} of this one)`
        : value instanceof Map || value instanceof Set
          ? `fake ${name} (an object inheriting its methods, with no contents to read)`
          : name;
      throw new TypeError(
        `${this.what()}: ${this.pathText(pathOf(parent, seg))} is a ${kind}; task arguments must be data (primitives, arrays, plain objects, Map, Set, Date, RegExp, errors, typed arrays, ArrayBuffer)`,
      );
    }
    const seen = this.seen;
    if (seen.includes(value)) {
      throw new TypeError(
        `${this.what()}: ${this.pathText(pathOf(parent, seg))} contains a reference cycle`,
      );
    }
    // `seen` holds the containers on the way down: its length is the depth.
    if (seen.length >= MAX_ARG_DEPTH) {
      throw new TypeError(
        `${this.what()}: ${this.root}: nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
      );
    }
    seen.push(value);
    const path = pathOf(parent, seg);
    try {
      // Always a copy: the arguments are taken as they are at the call (as Dask
      // pickles them in submit). Shared, a caller reusing its array or object after
      // submit (clearing a batch, refilling a buffer) would change what the task
      // computes (in process by reference; over TCP, encoded only when sent) but not
      // its key, which was hashed from the old value.
      // Each field read once, a getter's error named by its place (see readField.ts),
      // read inline: a closure per container and a call per field made the walk 2-3× as slow.
      if (isArray) {
        const out = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) {
          // An index may be a getter (Object.defineProperty), which may throw.
          let item: unknown;
          try {
            item = value[i];
          } catch (err) {
            throw this.unreadableField(path, i, err);
          }
          const t = typeof item;
          out[i] =
            t === "number" || t === "boolean" || t === "undefined" || t === "bigint"
              ? item
              : this.walk(item, path, i, true);
        }
        return out;
      }
      const rec = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(rec)) {
        const problem = keyProblem(k);
        if (problem !== null) {
          throw new TypeError(`${this.what()}: a key of ${this.pathText(path)} ${problem}`);
        }
        let item: unknown;
        try {
          item = rec[k];
        } catch (err) {
          throw this.unreadableField(path, k, err);
        }
        out[k] = this.walk(item, path, k, false);
      }
      return out;
    } finally {
      seen.pop();
    }
  }
}

/**
 * A copy of `value` (the arguments) with leaves replaced by `replace` (arrays,
 * plain objects, Maps, Sets and mutable data objects are copied). Strings are offered to `replace`
 * only inside arrays (as Dask matches keys in lists); task references and
 * futures anywhere. Throws a TypeError naming the path of a function, a
 * symbol or a cycle.
 */
export function mapArgs(
  value: unknown,
  replace: LeafReplacer,
  what: string | (() => string),
): unknown {
  return new ArgMapper(replace, what).map(value);
}

/**
 * The key of `future`, an argument at `path` of a task `what` submits for
 * `owner`: a TypeError for a future of another client, or one released (its
 * key may be forgotten by then: the task would be cancelled later for "lost
 * dependencies" instead of refused now, as `fireAndForget` and datasets refuse it).
 */
export function argumentFutureKey(
  future: Future,
  owner: object,
  what: string,
  path: string,
): string {
  if (future.host !== owner) throw new TypeError(`${what}: ${path} is a future of another client`);
  if (future.status === "released") {
    throw new TypeError(`${what}: ${path} is the future of ${future.key}, which was released`);
  }
  return future.key;
}

/**
 * `args` for a submitted task: every future of `owner` becomes a task
 * reference and its key is added to `deps`. A future of another client, or
 * one released, is refused. `what` names the call in errors (a function: made
 * only for an error).
 */
export function argsWithRefs(
  args: readonly unknown[],
  deps: Set<string>,
  owner: object,
  what: string | (() => string),
): unknown[] {
  return mapArgs(
    args,
    (v, parent, seg) => {
      if (v instanceof Future) {
        const call = typeof what === "string" ? what : what();
        const key = argumentFutureKey(v, owner, call, formatPath(pathOf(parent, seg)));
        deps.add(key);
        return taskRef(key);
      }
      if (typeof v !== "string") deps.add(v.__weftRef);
      return KEEP;
    },
    what,
  ) as unknown[];
}
