import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HeapSet } from "./heapSet.ts";
import type { Priority } from "./priority.ts";
import { comparePriority } from "./priority.ts";
import { KeyError } from "./pyErrors.ts";

/** A value with a mutable priority: the key is read when the value is added. */
interface Item {
  readonly id: number | string;
  prio: number[];
}

const item = (id: number | string, ...prio: number[]): Item => ({ id, prio });
const byPrio = (it: Item): Priority => it.prio;
const ids = (xs: Iterable<Item>): (number | string)[] => Array.from(xs, (x) => x.id);

describe("HeapSet basics", () => {
  it("pops smallest first, ties oldest first", () => {
    const h = new HeapSet(byPrio);
    const [a, b, c, d] = [item("a", 2), item("b", 1), item("c", 1), item("d", 0, 5)];
    for (const x of [a, b, c, d]) h.add(x);
    expect(h.size).toBe(4);
    expect(h.peek()).toBe(d);
    expect(ids(h.peekn(2))).toEqual(["d", "b"]);
    expect(ids(h.sorted())).toEqual(["d", "b", "c", "a"]);
    expect([h.pop(), h.pop(), h.pop(), h.pop()].map((x) => x.id)).toEqual(["d", "b", "c", "a"]);
    expect(h.size).toBe(0);
  });

  it("add is idempotent and keeps the original position", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 1);
    h.add(a);
    h.add(b);
    h.add(a);
    expect(h.size).toBe(2);
    expect(ids(h.sorted())).toEqual(["a", "b"]);
  });

  it("a key function that throws leaves the set as it was", () => {
    const boom = new Error("no priority");
    const h = new HeapSet<Item>((it) => {
      if (it.id === "bad") throw boom;
      return it.prio;
    });
    const [a, bad, c] = [item("a", 2), item("bad", 0), item("c", 1)];
    h.add(a);
    expect(() => h.add(bad)).toThrow(boom);
    h.add(c);
    expect(h.size).toBe(2);
    expect(h.has(bad)).toBe(false);
    expect(ids(h)).toEqual(["a", "c"]);
    expect([h.pop(), h.pop()].map((x) => x.id)).toEqual(["c", "a"]);
  });

  it("has/discard/remove", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 2);
    h.add(a);
    h.add(b);
    expect(h.has(a)).toBe(true);
    h.discard(a);
    expect(h.has(a)).toBe(false);
    h.discard(a); // no-op
    expect(() => h.remove(a)).toThrow(KeyError);
    h.remove(b);
    expect(h.size).toBe(0);
  });

  it("empty peek/pop/peekright/popright throw KeyError; peekn yields nothing", () => {
    const h = new HeapSet(byPrio);
    expect(() => h.peek()).toThrow(KeyError);
    expect(() => h.pop()).toThrow("pop from an empty set");
    expect(() => h.peekright()).toThrow("peek into empty set");
    expect(() => h.popright()).toThrow(KeyError);
    expect([...h.peekn(3)]).toEqual([]);
    expect(h.sorted()).toEqual([]);
    h.add(item("a", 1));
    expect([...h.peekn(0)]).toEqual([]);
    expect([...h.peekn(-1)]).toEqual([]);
  });

  it("iterates members in insertion order", () => {
    const h = new HeapSet(byPrio);
    const xs = [item(0, 3), item(1, 1), item(2, 2)];
    for (const x of xs) h.add(x);
    h.discard(xs[0]);
    h.add(xs[0]);
    expect(ids(h)).toEqual([1, 2, 0]);
  });

  it("peekright/popright return a value >= peek()", () => {
    const h = new HeapSet(byPrio);
    for (let i = 0; i < 20; i++) h.add(item(i, (i * 7) % 11));
    const right = h.peekright();
    expect(comparePriority(right.prio, h.peek().prio)).toBeGreaterThanOrEqual(0);
    expect(h.popright()).toBe(right);
    expect(h.has(right)).toBe(false);
    expect(h.size).toBe(19);
  });

  it("clear empties it; the insertion counter keeps ties ordered", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 1);
    h.add(a);
    h.clear();
    expect(h.size).toBe(0);
    expect(() => h.peek()).toThrow(KeyError);
    h.add(b);
    h.add(a);
    expect(ids(h.sorted())).toEqual(["b", "a"]);
  });
});

describe("HeapSet keys sharing a prefix", () => {
  it("orders by the elements after the shared prefix, also once a key shortens the prefix", () => {
    const h = new HeapSet(byPrio);
    const [a, b, c] = [item("a", 1, 2, 3), item("b", 1, 2, 1), item("c", 1, 2, 2)];
    const d = item("d", 1, 2);
    for (const x of [a, b, c]) h.add(x);
    h.add(d);
    const e = item("e", 0, 9);
    h.add(e);
    const f = item("f", 1, 2, 2, -1);
    h.add(f);
    expect(ids([h.pop(), h.pop(), h.pop(), h.pop(), h.pop(), h.pop()])).toEqual([
      "e",
      "d",
      "b",
      "c",
      "f",
      "a",
    ]);
    // Emptied, the heap starts afresh: a longer shared prefix, then one that differs early.
    for (const x of [item("g", 3, 3, 2), item("h", 3, 3, 1), item("i", -1)]) h.add(x);
    expect(ids(h.sorted())).toEqual(["i", "h", "g"]);
  });
});

describe("HeapSet lazy deletion (reference semantics)", () => {
  it("add a,b; discard a; add a: pops a then b", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 2);
    h.add(a);
    h.add(b);
    h.discard(a);
    h.add(a);
    expect(h.size).toBe(2);
    expect(h.pop()).toBe(a);
    expect(h.pop()).toBe(b);
    expect(h.size).toBe(0);
  });

  it("a re-added value comes out at its OLD position via the stale entry", () => {
    // Python: a.prio=(1,), b.prio=(2,); add a, add b; discard a; a.prio=(3,); add a
    // -> pop() is a (the stale (1,) entry refers to a member), then b.
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 2);
    h.add(a);
    h.add(b);
    h.discard(a);
    a.prio = [3];
    h.add(a);
    expect(h.peek()).toBe(a);
    expect(ids(h.sorted())).toEqual(["a", "b"]); // dedup: a's newer (3,) entry is skipped
    expect(h.pop()).toBe(a);
    // The (3,) entry for a is still in the heap but a is no longer a member.
    expect(h.peek()).toBe(b);
    expect(h.pop()).toBe(b);
    expect(() => h.pop()).toThrow(KeyError);
  });

  it("a stale entry becomes valid again after a re-add following pop", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 2);
    const c = item("c", 5);
    h.add(a); // (1,) #0
    h.add(b); // (2,) #1
    h.add(c); // (5,) #2
    h.discard(a);
    a.prio = [3];
    h.add(a); // (3,) #3 ; stale (1,) #0 is valid again
    expect(h.pop()).toBe(a); // via #0
    expect(h.pop()).toBe(b);
    a.prio = [9];
    h.add(a); // (9,) #4 ; entry #3 (3,) is still in the heap and valid
    expect(h.pop()).toBe(a); // via #3, before c (5,)
    expect(h.pop()).toBe(c);
    expect(h.size).toBe(0);
  });

  it("discarding the last member clears stale entries", () => {
    const h = new HeapSet(byPrio);
    const a = item("a", 1);
    const b = item("b", 2);
    h.add(a);
    h.add(b);
    h.discard(a);
    h.discard(b); // set empty -> clear(): the heap is emptied
    a.prio = [3];
    h.add(b);
    h.add(a);
    expect(ids([h.pop(), h.pop()])).toEqual(["b", "a"]);
  });

  // a's priority puts its stale entry where taking b does not reach it: behind b in
  // the heap for pop, at its front for popright.
  it.each([
    ["pop", 6, <T extends object>(h: HeapSet<T>) => h.pop()],
    ["popright", 5, <T extends object>(h: HeapSet<T>) => h.popright()],
  ])("%s taking the last member clears stale entries", (_name, prioA, take) => {
    type Marked = Item & { heapMarks: number };
    const sets: HeapSet<Marked>[] = [
      new HeapSet<Marked>(byPrio),
      HeapSet.marked<Marked>(byPrio, 1),
    ];
    for (const h of sets) {
      const a = { ...item("a", prioA), heapMarks: 0 };
      const b = { ...item("b", 5), heapMarks: 0 };
      h.add(a);
      h.add(b);
      h.discard(a);
      expect(take(h)).toBe(b); // the set is empty -> clear(), a's old entry goes
      const c = { ...item("c", prioA), heapMarks: 0 };
      h.add(c);
      h.add(a);
      // A surviving old entry of a would tie-break before c.
      expect(ids([h.pop(), h.pop()])).toEqual(["c", "a"]);
    }
  });
});

interface Trace {
  seed: number;
  prios: number[][];
  ops: [string, unknown, unknown][];
}

describe("HeapSet matches the Python reference on recorded traces", () => {
  const traces = JSON.parse(
    readFileSync(new URL("./__fixtures__/heapSet.json", import.meta.url), "utf8"),
  ) as Trace[];

  it.each(traces.map((t) => [t.seed, t] as const))("trace seed %i", (_seed, trace) => {
    const items = trace.prios.map((p, i) => item(i, ...p));
    const h = new HeapSet(byPrio);
    const attempt = (f: () => Item): number | string | "KeyError" => {
      try {
        return f().id;
      } catch (e) {
        expect(e).toBeInstanceOf(KeyError);
        return "KeyError";
      }
    };
    trace.ops.forEach(([op, arg, out], step) => {
      const where = `step ${step}: ${op}(${JSON.stringify(arg)})`;
      const it = typeof arg === "number" ? items[arg] : undefined;
      switch (op) {
        case "add":
          h.add(it as Item);
          break;
        case "discard":
          h.discard(it as Item);
          break;
        case "remove":
          expect(
            attempt(() => {
              h.remove(it as Item);
              return item("ok");
            }),
            where,
          ).toBe(out);
          break;
        case "setprio":
          (it as Item).prio = out as number[];
          break;
        case "pop":
        case "peek":
        case "peekright":
        case "popright":
          expect(
            attempt(() => h[op]()),
            where,
          ).toBe(out);
          break;
        case "peekn":
          expect(ids(h.peekn(arg as number)), where).toEqual(out);
          break;
        case "sorted":
          expect(ids(h.sorted()), where).toEqual(out);
          break;
        case "len":
          expect(h.size, where).toBe(out);
          break;
        case "has":
          expect(h.has(it as Item), where).toBe(out);
          break;
        case "iter":
          expect(
            ids(h).sort((x, y) => (x as number) - (y as number)),
            where,
          ).toEqual(out);
          break;
        case "clear":
          h.clear();
          break;
        default:
          throw new Error(`unknown op ${op}`);
      }
    });
  });
});

describe("HeapSet properties", () => {
  it("with fixed keys and no re-adds, pops in (key, insertion) order", () => {
    fc.assert(
      fc.property(
        // Keys of every length up to 4, negative elements and infinities included.
        fc.array(
          fc.array(
            fc.oneof(
              fc.integer({ min: -2, max: 4 }),
              fc.constantFrom(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, -0),
            ),
            { maxLength: 4 },
          ),
          { maxLength: 60 },
        ),
        fc.array(fc.nat(), { maxLength: 20 }),
        (prios, discards) => {
          const items = prios.map((p, i) => item(i, ...p));
          const h = new HeapSet(byPrio);
          for (const x of items) h.add(x);
          const gone = new Set<number>();
          for (const d of discards) {
            if (items.length === 0) break;
            const x = items[d % items.length];
            h.discard(x);
            gone.add(x.id as number);
          }
          const expected = items
            .filter((x) => !gone.has(x.id as number))
            .sort((x, y) => comparePriority(x.prio, y.prio) || (x.id as number) - (y.id as number));
          expect(ids(h.sorted())).toEqual(ids(expected));
          const popped: Item[] = [];
          while (h.size > 0) {
            expect(h.peek()).toBe(h.peek());
            popped.push(h.pop());
          }
          expect(ids(popped)).toEqual(ids(expected));
        },
      ),
    );
  });

  it("size and membership track a plain Set under random add/discard/pop", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("add", "discard", "pop", "popright"), fc.nat(15))),
        (ops) => {
          const items = Array.from({ length: 16 }, (_, i) => item(i, i % 4));
          const h = new HeapSet(byPrio);
          const model = new Set<Item>();
          for (const [op, i] of ops) {
            const x = items[i];
            if (op === "add") {
              h.add(x);
              model.add(x);
            } else if (op === "discard") {
              h.discard(x);
              model.delete(x);
            } else if (model.size > 0) {
              const y = op === "pop" ? h.pop() : h.popright();
              expect(model.has(y)).toBe(true);
              model.delete(y);
            }
            expect(h.size).toBe(model.size);
            for (const y of items) expect(h.has(y)).toBe(model.has(y));
          }
        },
      ),
    );
  });

  it("pushes and pops interleaved come out in (key, insertion) order", () => {
    // Keys whose first elements often tie (or are missing, or are -Infinity, which the
    // heap also uses for a missing element), so that later elements must decide.
    const element = fc.constantFrom(0, -0, 1, Number.NEGATIVE_INFINITY);
    const key = fc.array(element, { maxLength: 4 });
    fc.assert(
      fc.property(fc.array(fc.option(key, { freq: 3 }), { maxLength: 80 }), (ops) => {
        const h = new HeapSet(byPrio);
        const model: Item[] = [];
        let next = 0;
        for (const op of ops) {
          if (op !== null) {
            const x = item(next++, ...op);
            h.add(x);
            model.push(x);
          } else if (model.length > 0) {
            let best = 0;
            for (let i = 1; i < model.length; i++) {
              const c = comparePriority(model[i].prio, model[best].prio);
              if (c < 0 || (c === 0 && (model[i].id as number) < (model[best].id as number))) {
                best = i;
              }
            }
            expect(h.pop()).toBe(model[best]);
            model.splice(best, 1);
          }
          expect(h.size).toBe(model.length);
        }
      }),
    );
  });
});

describe("HeapSet.marked", () => {
  interface MItem extends Item {
    heapMarks: number;
  }
  const mitem = (id: number, ...prio: number[]): MItem => ({ id, prio, heapMarks: 0 });

  it("gives what a plain HeapSet gives, under random adds, discards, re-adds and pops", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom("add", "add", "discard", "pop", "peek", "sorted", "reprio", "clear"),
            fc.nat(11),
            fc.integer({ min: -2, max: 3 }),
          ),
          { maxLength: 80 },
        ),
        (ops) => {
          const items = Array.from({ length: 12 }, (_, i) => mitem(i, i % 3));
          const plain = new HeapSet<MItem>(byPrio);
          const marked = HeapSet.marked<MItem>(byPrio, 4);
          for (const [op, i, p] of ops) {
            const x = items[i];
            switch (op) {
              case "add":
                plain.add(x);
                marked.add(x);
                break;
              case "discard":
                plain.discard(x);
                marked.discard(x);
                break;
              case "reprio":
                // Lazy deletion: an entry keeps the key it was added with.
                if (!plain.has(x)) x.prio = [p];
                break;
              case "clear":
                plain.clear();
                marked.clear();
                break;
              case "pop":
                if (plain.size > 0) expect(marked.pop()).toBe(plain.pop());
                break;
              case "peek":
                if (plain.size > 0) expect(marked.peek()).toBe(plain.peek());
                break;
              case "sorted":
                expect(ids(marked.sorted())).toEqual(ids(plain.sorted()));
                break;
            }
            expect(marked.size).toBe(plain.size);
            for (const y of items) expect(marked.has(y)).toBe(plain.has(y));
            expect(ids(marked).sort()).toEqual(ids(plain).sort());
          }
          // Only bit 4 was ever set, and only on members.
          for (const y of items) expect(y.heapMarks).toBe(plain.has(y) ? 4 : 0);
        },
      ),
    );
  });

  it("keeps two heaps of the same values apart, and clear() unmarks its members", () => {
    const a = mitem(1, 1);
    const b = mitem(2, 0);
    const ready = HeapSet.marked<MItem>(byPrio, 1);
    const constrained = HeapSet.marked<MItem>(byPrio, 2);
    ready.add(a);
    ready.add(b);
    constrained.add(a);
    expect(a.heapMarks).toBe(3);
    expect(ready.pop()).toBe(b);
    expect(constrained.has(b)).toBe(false);
    constrained.clear();
    expect(a.heapMarks).toBe(1);
    expect(ready.has(a)).toBe(true);
    expect(() => constrained.remove(a)).toThrow(KeyError);
  });

  it("takes one power of two as its bit", () => {
    for (const bad of [0, 3, -1, 0.5, 2 ** 31]) {
      expect(() => HeapSet.marked<MItem>(byPrio, bad)).toThrow(/power of two/);
    }
  });
});
