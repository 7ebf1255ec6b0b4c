/**
 * The `key` option of `Client.map`, as Dask's `map(..., key=)` takes it: a
 * string is the prefix of every item's key (`<prefix>-<hash of the call>`, or
 * with `pure: false` `<prefix>-<client id>-<counter>`), an array the keys
 * themselves, one per item in order.
 */

import { showValue } from "../util/showValue.ts";
import { keyProblem } from "./taskArgs.ts";

/** `Client.map`'s own option, beside those of a submission (`SubmitOptions`). */
export interface MapOptions {
  /**
   * The items' keys, as Dask's `map(..., key=)`: a string is their prefix
   * (`<key>-<hash of the call>`, or with `pure: false` `<key>-<client
   * id>-<counter>`), an array the keys, one per item. Default (or null): the
   * function's name as the prefix.
   */
  readonly key?: string | readonly string[] | null;
}

/** What `map`'s `key` asks for, once checked. */
export type MapKeys =
  | { readonly kind: "derived" }
  | { readonly kind: "prefix"; readonly prefix: string }
  | { readonly kind: "explicit"; readonly keys: readonly string[] };

/**
 * `options` without its `key`, for the checks every submission shares, and
 * that key. Options that are no object are left as they are: those checks
 * refuse them, naming what they are.
 */
export function splitMapKey(options: unknown): { readonly rest: unknown; readonly key: unknown } {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    return { rest: options, key: undefined };
  }
  const { key, ...rest } = options as Record<string, unknown>;
  return { rest, key };
}

/** Check `key` (undefined or null: derived) for `count` items; errors name `map`. */
export function checkMapKeys(key: unknown, count: number): MapKeys {
  if (key === undefined || key === null) return { kind: "derived" };
  if (typeof key === "string") {
    if (key === "")
      throw new TypeError("map: key must not be empty (a prefix, or one key per item)");
    const problem = keyProblem(key);
    if (problem !== null) throw new TypeError(`map: key ${JSON.stringify(key)} ${problem}`);
    return { kind: "prefix", prefix: key };
  }
  if (!Array.isArray(key)) {
    throw new TypeError(
      `map: key must be a string (the prefix of every item's key) or an array of keys, one per item, got ${showValue(key)}`,
    );
  }
  if (key.length !== count) {
    throw new TypeError(`map: key gives ${key.length} keys for ${count} items (one per item)`);
  }
  const seen = new Set<string>();
  for (let i = 0; i < key.length; i++) {
    const k: unknown = key[i];
    if (typeof k !== "string" || k === "") {
      throw new TypeError(`map: key[${i}] must be a non-empty string, got ${showValue(k)}`);
    }
    const problem = keyProblem(k);
    if (problem !== null) throw new TypeError(`map: key[${i}] ${JSON.stringify(k)} ${problem}`);
    // Two items under one key would be one task: the second item's call lost.
    if (seen.has(k)) throw new TypeError(`map: key[${i}] ${JSON.stringify(k)} is given twice`);
    seen.add(k);
  }
  return { kind: "explicit", keys: [...key] as string[] };
}
