/**
 * A Map's entries and a Set's members as the built-in iteration gives them,
 * for the walks of a caller's values (the checks of what is data, the argument
 * walk, the searches for futures, a Map graph, sizeof). Iterating `m` itself calls whatever its
 * `Symbol.iterator` is: a subclass's, or one set on the object, which may
 * throw, yield entries the Map does not hold, or yield forever (the walk then
 * never ended). The built-in iteration reads what the Map holds, which is
 * what the structured clone and the wire codec carry of it. The methods are
 * taken once, at load: a later change of `Map.prototype` is not called either.
 */

import { types } from "node:util";

const entriesOfMap = Map.prototype.entries;
const valuesOfSet = Set.prototype.values;

/** The entries `m` holds. A TypeError if `m` is no Map (an object of `Map.prototype` only). */
export function mapEntries<K, V>(m: ReadonlyMap<K, V>): IterableIterator<[K, V]> {
  return entriesOfMap.call(m) as IterableIterator<[K, V]>;
}

/** The members `s` holds. A TypeError if `s` is no Set (an object of `Set.prototype` only). */
export function setValues<T>(s: ReadonlySet<T>): IterableIterator<T> {
  return valuesOfSet.call(s) as IterableIterator<T>;
}

/**
 * `v` is a Map of this realm: of `Map.prototype` or a subclass's, and a Map,
 * not an object that only inherits a Map's methods (`Object.create(Map.prototype)`,
 * whose entries cannot be read: the engine's "incompatible receiver").
 */
export function isMapObject(v: unknown): v is Map<unknown, unknown> {
  return v instanceof Map && types.isMap(v);
}

/** `v` is a Set of this realm (see {@link isMapObject}). */
export function isSetObject(v: unknown): v is Set<unknown> {
  return v instanceof Set && types.isSet(v);
}
