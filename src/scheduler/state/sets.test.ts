import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  EMPTY,
  itemsOf,
  SMALL_SET_MAX,
  SmallSet,
  setAdd,
  setDelete,
  sharedAdd,
  sharedRemove,
} from "./sets.ts";

describe("copy-on-first-add sets", () => {
  test("behave as an insertion-ordered Set under any sequence of adds and deletes", () => {
    const op = fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2 * SMALL_SET_MAX }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const objects = Array.from({ length: 2 * SMALL_SET_MAX + 1 }, (_, i) => ({ i }));
        let s: ReadonlySet<{ i: number }> = EMPTY;
        const model = new Set<{ i: number }>();
        for (const [add, n] of ops) {
          const o = objects[n];
          if (add) {
            s = setAdd(s, o);
            model.add(o);
          } else {
            expect(setDelete(s, o)).toBe(model.delete(o));
          }
          expect(s.size).toBe(model.size);
          expect([...s]).toEqual([...model]);
          expect(itemsOf(s)).toEqual([...model]);
          for (const x of objects) expect(s.has(x)).toBe(model.has(x));
        }
        expect(EMPTY.size).toBe(0);
      }),
      { seed: 20261130, numRuns: 500 },
    );
  });

  test("a few elements are kept in a SmallSet, more in a Set", () => {
    let s: ReadonlySet<number> = EMPTY;
    s = setAdd(s, 1);
    expect(s).toBeInstanceOf(SmallSet);
    for (let i = 2; i <= SMALL_SET_MAX; i++) s = setAdd(s, i);
    expect(s).toBeInstanceOf(SmallSet);
    s = setAdd(s, SMALL_SET_MAX + 1);
    expect(s).not.toBeInstanceOf(SmallSet);
    expect(s).toBeInstanceOf(Set);
    expect([...s]).toEqual(Array.from({ length: SMALL_SET_MAX + 1 }, (_, i) => i + 1));
  });

  test("a SmallSet reads like a Set", () => {
    const s = setAdd(setAdd(setAdd(EMPTY as ReadonlySet<string>, "a"), "b"), "c");
    setDelete(s, "b");
    expect([...s.keys()]).toEqual(["a", "c"]);
    expect([...s.values()]).toEqual(["a", "c"]);
    expect([...s.entries()]).toEqual([
      ["a", "a"],
      ["c", "c"],
    ]);
    const seen: string[] = [];
    s.forEach((v, v2, set) => {
      expect(v2).toBe(v);
      expect(set).toBe(s);
      seen.push(v);
    });
    expect(seen).toEqual(["a", "c"]);
    expect(new Set(s)).toEqual(new Set(["a", "c"]));
  });

  test("shared singletons are never mutated", () => {
    const a = { i: 1 };
    const b = { i: 2 };
    const one = sharedAdd(EMPTY as ReadonlySet<{ i: number }>, a);
    const two = sharedAdd(one, b);
    expect([...one]).toEqual([a]);
    expect([...two]).toEqual([a, b]);
    expect(sharedRemove(one, a)).toBe(EMPTY);
    expect([...one]).toEqual([a]);
  });
});
