import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_SIZEOF, sizeof, typeName } from "./sizeof.ts";

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

  it("caps depth", () => {
    let deep: unknown = "x".repeat(10_000);
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(sizeof(deep)).toBeLessThan(10_000);
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
