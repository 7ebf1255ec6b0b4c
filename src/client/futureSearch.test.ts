import { describe, expect, it } from "vitest";
import { endlessMap, endlessSet, ThrowingMap, ThrowingSet } from "../util/testRiggedCollections.ts";
import { Future } from "./future.ts";
import { holdsFuture, MAX_SEARCH_DEPTH, replaceFutures, searchFutures } from "./futureSearch.ts";
import { standInFutureHost } from "./testFutureHost.ts";

const host = standInFutureHost();
const f = new Future(host, "f");
const g = new Future(host, "g");

/** Where `searchFutures` finds each future of `v`: `key@steps`. */
function found(v: unknown): string[] {
  const out: string[] = [];
  searchFutures(v, "gather", (future, steps) => out.push(`${future.key}@${steps.join(".")}`));
  return out;
}

/** `v` nested in `depth` arrays. */
function nested(v: unknown, depth: number): unknown {
  let out = v;
  for (let i = 0; i < depth; i++) out = [out];
  return out;
}

describe("searchFutures", () => {
  it("finds futures in arrays and plain objects, null-prototype ones too, with the steps there", () => {
    const bare = Object.assign(Object.create(null) as object, { g });
    expect(found([f, { a: [g, f] }, bare])).toEqual(["f@0", "g@1.a.0", "f@1.a.1", "g@2.g"]);
    // A part shared (not a cycle) is searched each time it appears.
    const shared = [f];
    expect(found({ x: shared, y: [shared] })).toEqual(["f@x.0", "f@y.0.0"]);
  });

  it("refuses a future inside a Map, as a key too, or a Set, naming the outermost", () => {
    expect(() => found([new Map([[f, 1]])])).toThrow(
      new TypeError(
        "gather: a future inside a Map is not searched for; use an array or a plain object",
      ),
    );
    expect(() => found([new Map([["a", new Set([f])]])])).toThrow(/a future inside a Map is/);
    expect(() => found([new Set([new Map([["a", f]])])])).toThrow(/a future inside a Set is/);
  });
});

describe("holdsFuture", () => {
  it("looks into Maps (keys too) and Sets; cycles and shared parts are fine", () => {
    expect(holdsFuture([new Map([[f, 1]])], "logEvent")).toBe(true);
    expect(holdsFuture({ s: new Set([1, [g]]) }, "logEvent")).toBe(true);
    const cyclic: unknown[] = [1];
    cyclic.push(cyclic, new Map([["self", cyclic]]));
    expect(holdsFuture(cyclic, "logEvent")).toBe(false);
    expect(holdsFuture([nested(1, MAX_SEARCH_DEPTH - 1)], "logEvent")).toBe(false);
    expect(() => holdsFuture([nested(1, MAX_SEARCH_DEPTH)], "logEvent")).toThrow(
      new TypeError("logEvent: the argument nests deeper than 1000 levels"),
    );
  });
});

describe("the searches of Maps and Sets", () => {
  // Their own iterators throw (ThrowingMap, ThrowingSet) or yield their first item forever.
  it("read what a Map or Set holds, not what its own iterator yields", () => {
    for (const m of [
      new ThrowingMap<string, unknown>([["a", f]]),
      endlessMap<string, unknown>([
        ["x", 1],
        ["a", f],
      ]),
    ]) {
      expect(holdsFuture([m], "logEvent")).toBe(true);
      expect(() => found([m])).toThrow(
        new TypeError(
          "gather: a future inside a Map is not searched for; use an array or a plain object",
        ),
      );
    }
    for (const s of [new ThrowingSet([1, g]), endlessSet([1, g])]) {
      expect(holdsFuture([s], "logEvent")).toBe(true);
      expect(() => found([s])).toThrow(/^gather: a future inside a Set is not searched for/);
    }
    expect(holdsFuture([endlessMap([["x", 1]]), endlessSet([1])], "logEvent")).toBe(false);
  });

  it("name the place of a getter that throws through a Map's own entries", () => {
    const unreadable = {
      get b(): number {
        throw new Error("boom");
      },
    };
    expect(() => holdsFuture([new ThrowingMap([["k", unreadable]])], "logEvent")).toThrow(
      new TypeError("logEvent: value[0].<value 0>.b cannot be read (a getter threw): Error: boom"),
    );
  });

  it("pass over an object inheriting a Map's or Set's methods without being one, which holds nothing", () => {
    // Its entries read failed with the engine's 'incompatible receiver', not the caller's check.
    const fakes = { m: Object.create(Map.prototype), s: Object.create(Set.prototype) };
    expect(holdsFuture(fakes, "logEvent")).toBe(false);
    const found: Future[] = [];
    searchFutures(fakes, "Variable.set", (f) => found.push(f));
    expect(found).toEqual([]);
  });
});

describe("replaceFutures", () => {
  it("replaces futures in arrays and plain objects, copying those, sharing the rest", () => {
    const data = new Map([["n", 1]]);
    const v = { a: [f, { b: g }], data, n: 5 };
    const out = replaceFutures(v, (future) => `value of ${future.key}`) as typeof v;
    expect(out).toEqual({ a: ["value of f", { b: "value of g" }], data, n: 5 });
    expect(out.data).toBe(data);
    expect(v.a[0]).toBe(f);
  });
});
