/**
 * The cluster's metadata (Dask's `set_metadata` and `get_metadata`): a tree
 * of plain objects the scheduler keeps, read and written by key paths
 * (`["model", "version"]`), which go into the plain objects of the values set
 * as into the tree's own (as Dask's nested dicts). Clients send values
 * copied (structured-cloned), and get them back so.
 */

import { setOwnKey } from "../util/ownKey.ts";
import { RequestRefusal } from "./requestRefusal.ts";

type Tree = Record<string, unknown>;

/**
 * True for what a key path goes into: a plain object (or one without a
 * prototype, as the tree's own): not an array, an error, a date, a `Map`, whose
 * own properties (`length`, `stack`) are no metadata under keys.
 */
function isTree(v: unknown): v is Tree {
  if (typeof v !== "object" || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The cluster's metadata tree (see the module comment). */
export class Metadata {
  private readonly root: Tree = Object.create(null);

  /**
   * Set the value at `keys` (the whole tree for none: refused), making the
   * objects on the way; a TypeError if a value on the way is not an object.
   */
  set(keys: readonly string[], value: unknown): void {
    if (keys.length === 0) throw new TypeError("set-metadata: give at least one key");
    let at: Tree = this.root;
    for (let i = 0; i < keys.length - 1; i++) {
      // Own keys only, as get's: a plain object a client set inherits `__proto__`
      // (Object.prototype, itself a plain object: the path would go on into it and
      // set a key of every object in the scheduler) and `toString`, no values under keys.
      const next = Object.hasOwn(at, keys[i]) ? at[keys[i]] : undefined;
      if (next === undefined) {
        const made: Tree = Object.create(null);
        setOwnKey(at, keys[i], made);
        at = made;
      } else if (isTree(next)) {
        at = next;
      } else {
        throw new RequestRefusal(
          `set-metadata: ${JSON.stringify(keys.slice(0, i + 1))} holds a value, not metadata under keys`,
        );
      }
    }
    setOwnKey(at, keys[keys.length - 1], value);
  }

  /**
   * The value at `keys` (the whole tree for none), or `found: false`: a path
   * goes into plain objects only, as {@link set}'s does.
   */
  get(keys: readonly string[]): { found: true; value: unknown } | { found: false } {
    let at: unknown = this.root;
    for (const key of keys) {
      if (!isTree(at) || !Object.hasOwn(at, key)) return { found: false };
      at = at[key];
    }
    return { found: true, value: at };
  }
}
