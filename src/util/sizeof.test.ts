import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_SIZEOF, sizeof, typeName } from "./sizeof.ts";
import { endlessMap, ThrowingMap, ThrowingSet } from "./testRiggedCollections.ts";

describe("sizeof", () => {
  it("sizes primitives", () => {
    expect(sizeof(1)).toBe(8);
    expect(sizeof(1.5)).toBe(8);
    expect(sizeof(true)).toBe(8);
    expect(sizeof(null)).toBe(8);
    expect(sizeof(undefined)).toBe(8);
    expect(sizeof("")).toBeGreaterThan(0);
    expect(sizeof("abcd") - sizeof("")).toBe(8); // 2 bytes per UTF-16 unit
    expect(sizeof(2n ** 200n)).toBeGreaterThan(sizeof(1n));
    expect(sizeof(Symbol("s"))).toBeGreaterThan(0);
  });

  it("sizes binary data by byteLength", () => {
    const small = sizeof(new Uint8Array(0));
    expect(sizeof(new Uint8Array(1000)) - small).toBe(1000);
    expect(sizeof(new Float64Array(10)) - small).toBe(80);
    expect(sizeof(Buffer.alloc(4096)) - small).toBe(4096);
    expect(sizeof(new ArrayBuffer(100)) - small).toBe(100);
    expect(sizeof(new DataView(new ArrayBuffer(64))) - small).toBe(64);
  });

  it("sums container contents", () => {
    const big = "x".repeat(1000);
    expect(sizeof([big])).toBeGreaterThan(2000);
    expect(sizeof({ a: big })).toBeGreaterThan(2000);
    expect(sizeof(new Map([["k", big]]))).toBeGreaterThan(2000);
    expect(sizeof(new Set([big]))).toBeGreaterThan(2000);
    expect(sizeof([1, 2, 3])).toBeLessThan(sizeof([1, 2, 3, 4]));
    expect(sizeof({ a: 1 })).toBeLessThan(sizeof({ a: 1, b: 2 }));
  });

  it("sizes what a Map or Set holds, not what an iterator of its own yields", () => {
    const big = "x".repeat(1000);
    const plain = sizeof(new Map([["k", big]]));
    expect(sizeof(new ThrowingMap([["k", big]]))).toBe(plain);
    expect(sizeof(new ThrowingSet([big]))).toBe(sizeof(new Set([big])));
    // Its own iterator yields the big entry again and again; it holds it once, beside a small one.
    expect(
      sizeof(
        endlessMap<string, unknown>([
          ["k", big],
          ["j", 1],
        ]),
      ),
    ).toBe(
      sizeof(
        new Map<string, unknown>([
          ["k", big],
          ["j", 1],
        ]),
      ),
    );
  });

  it("samples large containers and scales up", () => {
    const arr = Array.from({ length: 100_000 }, () => new Float64Array(100));
    const estimate = sizeof(arr);
    const exact = 100_000 * 800;
    expect(estimate).toBeGreaterThan(exact);
    expect(estimate).toBeLessThan(exact * 1.5);
    const set = new Set(arr);
    expect(sizeof(set)).toBeGreaterThan(exact);
    const map = new Map(arr.map((v, i) => [i, v]));
    expect(sizeof(map)).toBeGreaterThan(exact);
    const obj = Object.fromEntries(arr.slice(0, 1000).map((v, i) => [`k${i}`, v]));
    expect(sizeof(obj)).toBeGreaterThan(1000 * 800);
  });

  it("is deterministic", () => {
    const arr = Array.from({ length: 1000 }, (_, i) => "y".repeat(i));
    expect(sizeof(arr)).toBe(sizeof(arr));
  });

  it("is cycle-safe and counts shared objects once", () => {
    const a: unknown[] = [];
    a.push(a);
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(sizeof(a)).toBeGreaterThan(0);
    expect(sizeof(o)).toBeGreaterThan(0);
    const shared = new Uint8Array(10_000);
    expect(sizeof([shared, shared])).toBeLessThan(2 * 10_000);
  });

  it("counts what lies deep inside containers, as deep as a task result may be", () => {
    // A value nine levels down was once counted by its parent's slots alone: 10 MB as 496 B.
    let deep: unknown = new Uint8Array(10_000);
    for (let i = 0; i < 50; i++) deep = i % 2 === 0 ? { child: deep } : [deep];
    expect(sizeof(deep)).toBeGreaterThan(10_000);
    let strings: unknown = "x".repeat(10_000);
    for (let i = 0; i < 999; i++) strings = [strings];
    expect(sizeof(strings)).toBeGreaterThan(20_000);
  });

  it("never throws; opaque values get the default", () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("nope");
        },
      },
    );
    expect(sizeof(hostile)).toBe(DEFAULT_SIZEOF);
    const getter = {
      get boom(): number {
        throw new Error("boom");
      },
    };
    expect(sizeof(getter)).toBe(DEFAULT_SIZEOF);
    expect(sizeof(() => 1)).toBe(DEFAULT_SIZEOF);
    expect(sizeof(Promise.resolve(1))).toBe(DEFAULT_SIZEOF);
    expect(sizeof(new WeakMap())).toBe(DEFAULT_SIZEOF);
  });

  it("returns a non-negative integer for anything", () => {
    fc.assert(
      fc.property(fc.anything({ withMap: true, withSet: true, withTypedArray: true }), (v) => {
        const n = sizeof(v);
        expect(Number.isInteger(n)).toBe(true);
        expect(n).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});

describe("typeName", () => {
  class Widget {}
  it.each([
    [1, "number"],
    ["s", "string"],
    [true, "boolean"],
    [null, "null"],
    [undefined, "undefined"],
    [1n, "bigint"],
    [Symbol("x"), "symbol"],
    [() => 1, "function"],
    [[], "Array"],
    [new Map(), "Map"],
    [new Set(), "Set"],
    [{}, "Object"],
    [Object.create(null), "Object"],
    [new Uint8Array(1), "Uint8Array"],
    [Buffer.alloc(1), "Buffer"],
    [new Widget(), "Widget"],
    [new Error("e"), "Error"],
  ])("typeName(%o) == %j", (value, name) => {
    expect(typeName(value)).toBe(name);
  });

  it("never throws", () => {
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error("nope");
        },
      },
    );
    expect(typeName(hostile)).toBe("Object");
  });
});

describe("sizeof work bound", () => {
  it("inspects a bounded number of objects in wide, deep structures", () => {
    // 10 children per level, 7 levels: 10^7 leaves if walked fully. The children are made
    // when first read (through a Proxy), so the count of those made is the work done,
    // whatever the machine's speed.
    let made = 0;
    const node = (level: number): unknown => {
      made++;
      if (level === 0) return new Uint8Array(8);
      const children = new Map<number, unknown>();
      return new Proxy(new Array<unknown>(10).fill(null), {
        get(target, prop, receiver) {
          if (typeof prop === "string" && /^\d+$/.test(prop)) {
            const i = Number(prop);
            if (i >= target.length) return undefined;
            let child = children.get(i);
            if (child === undefined) children.set(i, (child = node(level - 1)));
            return child;
          }
          return Reflect.get(target, prop, receiver);
        },
      });
    };
    const n = sizeof(node(7));
    expect(n).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(12_000); // 10,031 today: the 10,000-object budget
  });
});

describe("sizeof, exactly", () => {
  // The documented model: 8 per number or slot, 16 per object or string header, 2 per
  // UTF-16 unit. Reports are compared across workers, so the model itself is pinned.
  it("counts each container's slots: arrays 1, objects 2 (key and value), Sets 3, Maps 4", () => {
    expect(sizeof([])).toBe(16);
    expect(sizeof([1, 2])).toBe(16 + 2 * 8 + 2 * 8);
    expect(sizeof(new Set([1, 2]))).toBe(16 + 2 * 24 + 2 * 8);
    expect(sizeof(new Map([[1, 2]]))).toBe(16 + 32 + 8 + 8); // key and value both count
    expect(sizeof({ ab: 1 })).toBe(16 + 16 + (16 + 2 * 2) + 8); // the key string counts too
  });

  it("sizes bigints by 64-bit words of their magnitude", () => {
    expect(sizeof(2n ** 64n)).toBe(16 + 2 * 8); // 65 bits
    expect(sizeof(2n ** 64n - 1n)).toBe(16 + 8);
    expect(sizeof(-(2n ** 64n - 1n))).toBe(16 + 8); // the sign is no extra word
  });

  it("gives the special objects their own sizes", () => {
    expect(sizeof(Symbol("s"))).toBe(24);
    expect(sizeof(new Date(0))).toBe(24);
    expect(sizeof(/abc/g)).toBe(16 + 16 + 2 * 3);
    const err = new Error("m");
    err.stack = "at x";
    expect(sizeof(err)).toBe(16 + (16 + 2) + (16 + 2 * 4));
    // A message or stack that code set to something else counts as that value
    // (a NaN size made the scheduler refuse the task's report: the task never ended).
    const odd = new Error("m");
    Object.assign(odd, { message: { code: 42 }, stack: 7 });
    expect(sizeof(odd)).toBe(16 + (16 + 2 * 8 + (16 + 2 * 4 + 8)) + 8);
    expect(sizeof(new SharedArrayBuffer(100))).toBe(116);
    expect(sizeof(new WeakSet())).toBe(DEFAULT_SIZEOF);
    expect(sizeof(new WeakRef({}))).toBe(DEFAULT_SIZEOF);
  });

  it("walks 1000 levels of containers; the 1001st counts only its own slots", () => {
    const big = "x".repeat(1000);
    const nest = (levels: number): unknown => {
      let v: unknown = big;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(sizeof(nest(8))).toBe(8 * 24 + 2016);
    expect(sizeof(nest(1000))).toBe(1000 * 24 + 2016);
    expect(sizeof(nest(1001))).toBe(1001 * 24);
  });

  it("samples large objects' keys evenly spaced, not the first ten", () => {
    // Keys k00..k19: the even ones (what an even spacing of 10 in 20 picks) hold big values.
    const o = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [
        `k${String(i).padStart(2, "0")}`,
        i % 2 ? 0 : "x".repeat(100),
      ]),
    );
    const sampled = 10 * (16 + 6 + 216);
    expect(sizeof(o)).toBe(16 + 20 * 16 + 2 * sampled);
  });

  it("Sets and Maps measure only their first 10 items", () => {
    const big = "x".repeat(1000);
    const ten = Array.from({ length: 10 }, (_, i) => i);
    expect(sizeof(new Set([...ten, big]))).toBe(sizeof(new Set([...ten, -1])));
    const entries = (last: unknown): [unknown, unknown][] => [
      ...ten.map((i): [unknown, unknown] => [i, i]),
      [-1, last],
    ];
    expect(sizeof(new Map(entries(big)))).toBe(sizeof(new Map(entries(-1))));
  });

  it("walks into the 9,999th object but counts the 10,000th (the budget's last) by its slots only", () => {
    const level = (depth: number): unknown[] =>
      Array.from({ length: 10 }, () => (depth === 1 ? new Uint8Array(1) : level(depth - 1)));
    const big = "x".repeat(1000);
    // Nine subtrees of 1 + 10 + 100 + 1000 objects, less two leaves, under the root: in
    // walk order x is object 9,999 and y, its first item, object 10,000.
    const tree = (y: unknown[], z: unknown): unknown[] => {
      const subtrees = Array.from({ length: 9 }, () => level(3));
      const first = (subtrees[0][0] as unknown[])[0] as unknown[];
      first[0] = 0;
      first[1] = 0;
      return [...subtrees, [y, z]];
    };
    expect(sizeof(tree(Array(10).fill(0), 0))).toBe(sizeof(tree(Array(10).fill(big), 0)));
    expect(sizeof(tree([], big)) - sizeof(tree([], 0))).toBe(2016 - 8);
  });
});

describe("typeName of an anonymous class", () => {
  it("says Object rather than an empty name", () => {
    const Anonymous = [class {}][0];
    expect(Anonymous.name).toBe("");
    expect(typeName(new Anonymous())).toBe("Object");
  });
});
