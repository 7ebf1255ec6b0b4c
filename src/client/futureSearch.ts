/**
 * Finding the futures inside a value, as Dask's `gather` does: in arrays and
 * plain objects at any depth. Maps and Sets are not searched, so a future
 * inside one is refused rather than left unresolved. Shared by `gather` and
 * the datasets; {@link holdsFuture} only checks (values the scheduler keeps).
 */

import { types } from "node:util";
import { isMapObject, isSetObject, mapEntries, setValues } from "../util/collectionEntries.ts";
import { Future } from "./future.ts";
import { proxyContents } from "./proxyContents.ts";
import { GETTER_THREW, unreadable } from "./readField.ts";

/** How deep values are searched: far beyond any real result shape, well within the stack. */
export const MAX_SEARCH_DEPTH = 1_000;

/** An array or a plain object: what is searched for futures. */
export function isContainer(v: object): boolean {
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** One step down into a container: an array index or an object's own key. */
export type PathStep = number | string;

/**
 * Call `visit(future, steps)` for each place a future is found in `v` (arrays
 * and plain objects, at any depth), in order; `steps` leads there from `v`
 * (the visitor must copy it to keep it). A TypeError, its message starting
 * with `op`, refuses a future inside a Map or Set, a reference cycle among
 * the containers searched, and a value nesting deeper than
 * {@link MAX_SEARCH_DEPTH}.
 */
export function searchFutures(
  v: unknown,
  op: string,
  visit: (f: Future, steps: readonly PathStep[]) => void,
): void {
  search(v, op, visit, [], [], null);
}

function search(
  v: unknown,
  op: string,
  visit: (f: Future, steps: readonly PathStep[]) => void,
  path: object[],
  steps: PathStep[],
  within: "Map" | "Set" | null,
): void {
  // Before anything reads it: its traps may throw (see proxyContents).
  if (typeof v === "object" && v !== null && types.isProxy(v)) {
    searchProxy(v, op, visit, path, steps, within);
    return;
  }
  if (v instanceof Future) {
    if (within !== null) {
      throw new TypeError(
        `${op}: a future inside a ${within} is not searched for; use an array or a plain object`,
      );
    }
    visit(v, steps);
    return;
  }
  if (typeof v !== "object" || v === null) return;
  const isMap = isMapObject(v);
  if (!isMap && !isSetObject(v) && !isContainer(v)) return;
  if (revisits(v, path, op, within)) return;
  if (path.length >= MAX_SEARCH_DEPTH) {
    throw new TypeError(`${op}: the argument nests deeper than ${MAX_SEARCH_DEPTH} levels`);
  }
  path.push(v);
  // A Map's or Set's contents as the built-in iteration reads them, not by its
  // own iterator, which may throw or yield forever (see collectionEntries.ts).
  if (isMap) {
    for (const [k, item] of mapEntries(v)) {
      search(k, op, visit, path, steps, within ?? "Map");
      search(item, op, visit, path, steps, within ?? "Map");
    }
  } else if (isSetObject(v)) {
    for (const item of setValues(v)) search(item, op, visit, path, steps, within ?? "Set");
  } else {
    // Each field read once, a getter's error named by its place (see readField.ts),
    // read inline: a closure and an iterator per container made the walk 1.8× as slow.
    const keys = Array.isArray(v) ? null : Object.keys(v);
    const n = keys === null ? (v as unknown[]).length : keys.length;
    for (let i = 0; i < n; i++) {
      const step: PathStep = keys === null ? i : keys[i];
      steps.push(step);
      let item: unknown;
      try {
        item = (v as Record<PathStep, unknown>)[step];
      } catch (err) {
        throw unreadable(`${op}: ${placeOf(steps)}`, GETTER_THREW, err);
      }
      search(item, op, visit, path, steps, within);
      steps.pop();
    }
  }
  path.pop();
}

/**
 * Whether `v` is on the `path` being searched: a reference cycle, refused but
 * within a Map or a Set (data there, not searched, where a cycle is allowed).
 */
function revisits(
  v: object,
  path: readonly object[],
  op: string,
  within: "Map" | "Set" | null,
): boolean {
  if (!path.includes(v)) return false;
  if (within !== null) return true;
  throw new TypeError(`${op}: the argument contains a reference cycle`);
}

/** `search` of the proxy `p`: of its contents, read once, as an array's or a plain object's. */
function searchProxy(
  p: object,
  op: string,
  visit: (f: Future, steps: readonly PathStep[]) => void,
  path: object[],
  steps: PathStep[],
  within: "Map" | "Set" | null,
): void {
  if (revisits(p, path, op, within)) return;
  const contents = proxyContents(p, () => `${op}: ${placeOf(steps)}`);
  if (contents === null) return;
  path.push(p);
  search(contents, op, visit, path, steps, within);
  path.pop();
}

/**
 * Where `target` sits in `root` (`value.a[0]`, `value.m.<value 2>` inside a
 * Map), looked for only to name it in an error: through arrays, plain objects,
 * Maps and Sets, not into proxies. Null if not found.
 */
function placeIn(root: unknown, target: object): string | null {
  const seen = new Set<object>();
  const find = (v: unknown, steps: PathStep[]): string | null => {
    if (v === target) return placeOf(steps);
    if (typeof v !== "object" || v === null || types.isProxy(v) || seen.has(v)) return null;
    seen.add(v);
    const entries: [PathStep, unknown][] = isMapObject(v)
      ? [...mapEntries(v)].flatMap(([k, item], i): [PathStep, unknown][] => [
          [`<key ${i}>`, k],
          [`<value ${i}>`, item],
        ])
      : isSetObject(v)
        ? [...setValues(v)].map((item, i): [PathStep, unknown] => [`<member ${i}>`, item])
        : isContainer(v)
          ? readableFields(v)
          : [];
    for (const [step, item] of entries) {
      const found = find(item, [...steps, step]);
      if (found !== null) return found;
    }
    return null;
  };
  return find(root, []);
}

/**
 * The fields of an array or a plain object, those whose getter throws left out:
 * {@link placeIn} names the place of a failure, and must not fail itself.
 */
function readableFields(v: object): [PathStep, unknown][] {
  const fields: [PathStep, unknown][] = [];
  const steps: Iterable<PathStep> = Array.isArray(v) ? v.keys() : Object.keys(v);
  for (const step of steps) {
    try {
      fields.push([step, (v as Record<PathStep, unknown>)[step]]);
    } catch {
      // Not where the target is: the walk that failed did not get past it.
    }
  }
  return fields;
}

/** `value[0].x` for the steps from the value searched. */
function placeOf(steps: readonly PathStep[]): string {
  let out = "value";
  for (const step of steps) out += typeof step === "number" ? `[${step}]` : `.${step}`;
  return out;
}

/**
 * Whether `v` holds a future anywhere: in arrays, plain objects, Maps and Sets,
 * at any depth. Each container is looked into once, so shared parts cost
 * nothing more and reference cycles are fine (this only checks; values the
 * scheduler keeps for clients are copied as the structured clone copies them,
 * cycles and all). A TypeError naming `op` refuses a value nesting deeper than
 * {@link MAX_SEARCH_DEPTH}.
 */
export function holdsFuture(v: unknown, op: string): boolean {
  return holds(v, op, new WeakSet(), 0, v);
}

function holds(
  v: unknown,
  op: string,
  seen: WeakSet<object>,
  depth: number,
  root: unknown,
): boolean {
  // Before anything reads it: its traps may throw (see proxyContents).
  if (typeof v === "object" && v !== null && types.isProxy(v)) {
    if (seen.has(v)) return false;
    seen.add(v);
    const contents = proxyContents(v, () => `${op}: ${placeIn(root, v) ?? "a Proxy in the value"}`);
    return contents !== null && holds(contents, op, seen, depth + 1, root);
  }
  if (v instanceof Future) return true;
  if (typeof v !== "object" || v === null) return false;
  const isMap = isMapObject(v);
  if (!isMap && !isSetObject(v) && !isContainer(v)) return false;
  if (seen.has(v)) return false;
  seen.add(v);
  if (depth >= MAX_SEARCH_DEPTH) {
    throw new TypeError(`${op}: the argument nests deeper than ${MAX_SEARCH_DEPTH} levels`);
  }
  if (isMap) {
    for (const [k, item] of mapEntries(v)) {
      if (holds(k, op, seen, depth + 1, root) || holds(item, op, seen, depth + 1, root)) {
        return true;
      }
    }
    return false;
  }
  if (isSetObject(v)) {
    for (const item of setValues(v)) if (holds(item, op, seen, depth + 1, root)) return true;
    return false;
  }
  // Each field read once, a getter's error named by its place (see readField.ts),
  // read inline as in search.
  const keys = Array.isArray(v) ? null : Object.keys(v);
  const n = keys === null ? (v as unknown[]).length : keys.length;
  for (let i = 0; i < n; i++) {
    const step: PathStep = keys === null ? i : keys[i];
    let item: unknown;
    try {
      item = (v as Record<PathStep, unknown>)[step];
    } catch (err) {
      throw unreadable(`${op}: ${fieldPlace(root, v, step)}`, GETTER_THREW, err);
    }
    if (holds(item, op, seen, depth + 1, root)) return true;
  }
  return false;
}

/** Where the field `step` of `container` sits in `root`, for an error. */
function fieldPlace(root: unknown, container: object, step: PathStep): string {
  const at = placeIn(root, container);
  if (at === null) return "a field of an object in the value";
  return typeof step === "number" ? `${at}[${step}]` : `${at}.${step}`;
}

/**
 * `v` with each future `f` in arrays and plain objects replaced by
 * `replace(f)` (containers copied, other values shared).
 */
export function replaceFutures(v: unknown, replace: (f: Future) => unknown): unknown {
  if (v instanceof Future) return replace(v);
  if (typeof v !== "object" || v === null || !isContainer(v)) return v;
  if (Array.isArray(v)) return v.map((item) => replaceFutures(item, replace));
  // fromEntries defines own properties: an own "__proto__" key stays a key.
  return Object.fromEntries(
    Object.entries(v).map(([k, item]) => [k, replaceFutures(item, replace)]),
  );
}
