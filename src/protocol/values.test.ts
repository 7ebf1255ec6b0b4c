import { deserialize, serialize } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { endlessMap, endlessSet, ThrowingMap } from "../util/testRiggedCollections.ts";
import { actorRef } from "./actors.ts";
import { MAX_ARG_DEPTH } from "./messagesTaskSpec.ts";
import { checkValue, valueProblem } from "./values.ts";

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe("valueProblem", () => {
  it("accepts data, of this realm or another, with cycles and shared references", () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const shared = { s: 1 };
    const data: unknown[] = [
      1,
      "s\uD800", // a lone surrogate: the structured clone keeps it
      10n,
      undefined,
      null,
      new Array(3), // holes
      { a: [1, { b: new Date(0) }] },
      Object.create(null),
      new Map<unknown, unknown>([[{ k: 1 }, new Set([1, "x"])]]),
      new Float64Array(3),
      new Uint8Array(new SharedArrayBuffer(4)), // a view: copied by the clone
      Buffer.from("ab"),
      new DataView(new ArrayBuffer(2)),
      new ArrayBuffer(8),
      /x/g,
      new TypeError("t"),
      new (class ValueError extends Error {})("v"),
      Object(1),
      Object("s"),
      cycle,
      [shared, shared],
      actorRef("counter-1", "inproc://local/2"),
      runInNewContext("({ a: [1, 2], m: new Map([[1, new Date(0)]]), d: new Date(0) })"),
      nested(MAX_ARG_DEPTH),
    ];
    for (const [i, v] of data.entries()) {
      expect(valueProblem(v, "result"), `data[${i}]`).toBeNull();
    }
  });

  it("names what is not data by its path: functions, symbols, class instances, subclasses, proxies, shared memory", () => {
    const cases: [unknown, RegExp][] = [
      [() => 1, /^result is a function$/],
      [Symbol("s"), /^result is a symbol$/],
      [
        new Point(1, 2),
        /^result is a Point \(an instance of a class: it would arrive as a plain object/,
      ],
      [{ rows: [{ p: new Point(1, 2) }] }, /^result\.rows\[0\]\.p is a Point /],
      [new URL("http://a/"), /^result is a URL /],
      [new Map([[1, new Point(0, 0)]]), /^result <value 0> is a Point /],
      [new Map([[Symbol("k"), 1]]), /^result <key 0> is a symbol$/],
      [new Set([() => 1]), /^result <member 0> is a function$/],
      // A clone keeps the built-in class it extends (v8.deserialize makes a Map of a Table).
      [
        new (class Table extends Map {})(),
        /^result is a Table \(a subclass of Map: it would arrive as a plain Map, without its prototype/,
      ],
      [
        new (class Stamp extends Date {})(),
        /^result is a Stamp \(a subclass of Date: it would arrive as a plain Date,/,
      ],
      [
        new (class Bytes extends class Raw extends Uint8Array {} {})(2),
        /^result is a Bytes \(a subclass of Uint8Array: it would arrive as a plain Uint8Array,/,
      ],
      [
        new (class Row extends Array {})(),
        /^result is a Row \(a subclass of Array: it would arrive as a plain Array,/,
      ],
      [new Proxy({}, {}), /^result is a Proxy/],
      [
        { m: Object.create(Map.prototype) },
        /^result\.m is a fake Map \(an object inheriting its methods, with no contents to read\)$/,
      ],
      [Object.create(Set.prototype), /^result is a fake Set /],
      [new SharedArrayBuffer(8), /^result is a SharedArrayBuffer, whose memory cannot be shared/],
      [Object(Symbol("s")), /^result is a symbol \(boxed\)$/],
      [Promise.resolve(1), /^result is a Promise /],
      [new WeakMap(), /^result is a WeakMap /],
      [Object.create(Point.prototype), /^result is a Point /],
      [Object.create(Object.create(null)), /^result is a object with a prototype /],
      [nested(MAX_ARG_DEPTH + 1), /is nested deeper than 1000 arrays, objects, Maps or Sets$/],
    ];
    for (const [v, message] of cases) expect(valueProblem(v, "result")).toMatch(message);
  });

  it("checks each container once: shared references do not multiply the work, cycles end", () => {
    let dag: unknown = { leaf: 1 };
    for (let i = 0; i < 60; i++) dag = i % 2 === 0 ? [dag, dag] : { l: dag, r: dag };
    expect(valueProblem(dag, "result")).toBeNull();
    const ring: unknown[] = [1];
    ring.push({ back: ring, more: [ring] });
    expect(valueProblem(ring, "result")).toBeNull();
    (ring[1] as { more: unknown[] }).more.push(() => 1);
    expect(valueProblem(ring, "result")).toBe("result[1].more[1] is a function");
  });

  it("checks an error's cause, which the clone carries, and refuses one that refers back to its error", () => {
    // Data in a cause, an error shared, a cycle the error is not in: V8 reads them back.
    const inner = new RangeError("r");
    const ring: Record<string, unknown> = {};
    ring.e = new Error("x", { cause: ring });
    const fine: unknown[] = [
      new Error("e", { cause: { code: 1, when: new Date(0) } }),
      new TypeError("t", { cause: inner }),
      [inner, new Error("e", { cause: inner }), inner],
      ring,
    ];
    for (const [i, v] of fine.entries()) {
      expect(valueProblem(v, "result"), `fine[${i}]`).toBeNull();
      expect(() => deserialize(serialize(v)), `fine[${i}]`).not.toThrow();
    }
    expect(valueProblem(new Error("e", { cause: () => 1 }), "result")).toBe(
      "result.cause is a function",
    );
    expect(valueProblem([new Error("e", { cause: { p: new Point(1, 2) } })], "result")).toMatch(
      /^result\[0\]\.cause\.p is a Point \(an instance of a class/,
    );
    // V8 writes these but cannot read them back: they failed where they arrived.
    const self = new Error("self");
    self.cause = self;
    const viaObject = new Error("via");
    viaObject.cause = { back: [viaObject] };
    const a = new Error("a");
    a.cause = new Error("b", { cause: a });
    const unreadable: [unknown, string][] = [
      [self, "result.cause"],
      [viaObject, "result.cause.back[0]"],
      [{ a }, "result.a.cause.cause"],
    ];
    for (const [v, where] of unreadable) {
      expect(() => deserialize(serialize(v)), where).toThrow(/Unable to deserialize/);
      expect(valueProblem(v, "result")).toBe(
        `${where} is an error its own cause refers back to, which the structured clone writes but cannot read back`,
      );
    }
  });

  it("refuses an ArrayBuffer whose memory was transferred away, and views of one", () => {
    const gone = new ArrayBuffer(8);
    const view = new Float64Array(gone);
    structuredClone(gone, { transfer: [gone] });
    expect(() => serialize(gone)).toThrow(/detached/);
    expect(valueProblem({ b: gone }, "result")).toBe(
      "result.b is an ArrayBuffer whose memory was transferred away (detached), which cannot be cloned",
    );
    expect(valueProblem([view], "result")).toBe(
      "result[0] is a view of an ArrayBuffer whose memory was transferred away (detached), which cannot be cloned",
    );
    // Empty is not detached.
    expect(
      valueProblem([new ArrayBuffer(0), new Uint8Array(0), Buffer.alloc(0)], "result"),
    ).toBeNull();
  });

  it("a getter that throws is reported where it sits, not thrown, with what it threw", () => {
    const noX = new RangeError("no x");
    const v = {
      get x(): number {
        throw noX;
      },
    };
    expect(checkValue({ v }, "args[0]")).toEqual({
      problem: "args[0].v.x cannot be read (a getter threw): RangeError: no x",
      unreadable: { cause: noX },
      holdsBuffers: false,
    });
    const a = Object.defineProperty([1, 2], 1, {
      get() {
        throw noX;
      },
    });
    expect(checkValue(new Map([[1, a]]), "result")).toEqual({
      problem: "result <value 0>[1] cannot be read (a getter threw): RangeError: no x",
      unreadable: { cause: noX },
      holdsBuffers: false,
    });
    expect(checkValue({ f: () => 1 }, "result").unreadable).toBeNull();
  });

  it("reads a Map's entries and a Set's members as the clone does, not by their own iterator", () => {
    // Their own iterators yield their first item forever.
    expect(valueProblem([endlessMap([[1, "a"]]), endlessSet([1, 2])], "result")).toBeNull();
    expect(
      valueProblem(
        {
          m: endlessMap<number, unknown>([
            [1, "a"],
            [2, () => 1],
          ]),
        },
        "result",
      ),
    ).toBe("result.m <value 1> is a function");
    expect(valueProblem(endlessSet<unknown>([1, Symbol.for("s")]), "result")).toBe(
      "result <member 1> is a symbol",
    );
    // A subclass is refused before it is read: it would arrive as a Map.
    expect(valueProblem([new ThrowingMap([[1, 2]])], "result")).toMatch(
      /^result\[0\] is a ThrowingMap \(a subclass of Map: it would arrive as a plain Map,/,
    );
  });

  it("accepts exactly what keeps its meaning through v8.serialize (its prototype, for data)", () => {
    const accepted: unknown[] = [
      new Map([[1, 2]]),
      new Date(0),
      new Float32Array(2),
      Buffer.from("x"),
      { a: 1 },
      [1],
    ];
    for (const v of accepted) {
      expect(valueProblem(v, "v")).toBeNull();
      expect(Object.getPrototypeOf(deserialize(serialize(v)))).toBe(Object.getPrototypeOf(v));
    }
    // What is refused would lose its prototype.
    expect(Object.getPrototypeOf(deserialize(serialize(new Point(1, 2))))).toBe(Object.prototype);
    expect(deserialize(serialize(new URL("http://a/")))).toEqual({});
  });
});
