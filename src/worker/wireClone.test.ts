import { deserialize, serialize } from "node:v8";
import { describe, expect, it, vi } from "vitest";
import { SerializationError } from "../comm/errors.ts";
import { checkValue } from "../protocol/values.ts";
import { checkedWireClone, wireClone } from "./wireClone.ts";

/** The prototypes of `v` and of everything in it, in walk order. */
function protos(v: unknown, out: unknown[] = []): unknown[] {
  if (typeof v !== "object" || v === null) return out;
  out.push(Object.getPrototypeOf(v));
  if (ArrayBuffer.isView(v)) return out;
  const items = v instanceof Map ? [...v].flat() : v instanceof Set ? [...v] : Object.values(v);
  for (const item of items) protos(item, out);
  return out;
}

describe("wireClone", () => {
  const data: unknown[] = [
    { a: [1, "s", 2n, null, undefined], d: new Date(5) },
    new Map<unknown, unknown>([[{ k: 1 }, new Set([1, "x", new Float32Array([1.5])])]]),
    [new TypeError("t"), /x/gi, new DataView(new ArrayBuffer(3))],
    { b: Buffer.from("ab"), u: new Uint8Array([1, 2]) },
    { shared: new Uint8Array(new SharedArrayBuffer(4)) },
    Buffer.from("top"),
    new Float64Array([1, 2]),
    new ArrayBuffer(4),
    "s\uD800",
    Object.create(null),
  ];

  it("gives what the wire gives (v8.serialize), with or without a check, sharing no memory", () => {
    for (const [i, v] of data.entries()) {
      const check = checkValue(v, "v");
      expect(check.problem, `data[${i}]`).toBeNull();
      const wire = deserialize(serialize(v));
      for (const copy of [wireClone(v), wireClone(v, check)]) {
        expect(copy, `data[${i}]`).toEqual(wire);
        const expected = protos(wire);
        const got = protos(copy);
        expect(got.length, `data[${i}]`).toBe(expected.length);
        for (const [j, p] of got.entries()) expect(p === expected[j], `data[${i}] ${j}`).toBe(true);
        if (typeof v === "object" && v !== null) expect(copy).not.toBe(v);
      }
    }
    // A Buffer stays a Buffer, which structuredClone alone would make a Uint8Array.
    const v = { b: Buffer.from("ab") };
    expect(Buffer.isBuffer((wireClone(v, checkValue(v, "v")) as typeof v).b)).toBe(true);
  });

  it("small plain values (copied without structuredClone) keep what the clone keeps: holes, extra properties, sharing, -0", () => {
    const shared = { s: 1 };
    const withProp = Object.assign([1, 2], { extra: "x" });
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const cases: unknown[] = [
      { id: 7, name: "row", tags: ["a", "b"], values: [1.5, -0, Number.NaN, 2n, null, undefined] },
      [[[]], {}, ""],
      new Array(3), // holes
      Object.assign(new Array(3), { 0: 1, 2: 3 }), // a hole between elements
      withProp,
      [shared, shared],
      { a: shared, b: [shared] },
      cycle,
      JSON.parse('{"__proto__": 1, "x": 2}'),
      { 2: "two", 1: "one", b: "b", a: "a" },
      Object.create(null),
    ];
    for (const [i, v] of cases.entries()) {
      const check = checkValue(v, "v");
      expect(check.problem, `cases[${i}]`).toBeNull();
      const copy = wireClone(v, check);
      const wire = deserialize(serialize(v));
      expect(copy, `cases[${i}]`).toEqual(wire);
      expect(copy, `cases[${i}]`).not.toBe(v);
      // What toEqual does not look at: keys and their order, holes, identity, the prototype.
      expect(Reflect.ownKeys(copy as object), `cases[${i}]`).toEqual(Reflect.ownKeys(wire));
      expect(Object.getPrototypeOf(copy), `cases[${i}]`).toBe(Object.getPrototypeOf(wire));
    }
    // Plain ones are copied without structuredClone; holes and other properties are cloned.
    const clone = vi.spyOn(globalThis, "structuredClone");
    try {
      for (const i of [0, 1, 5, 6, 7, 9]) wireClone(cases[i], checkValue(cases[i], "v"));
      expect(clone).not.toHaveBeenCalled();
      for (const i of [2, 3, 4, 8, 10]) wireClone(cases[i], checkValue(cases[i], "v"));
      expect(clone).toHaveBeenCalledTimes(5);
    } finally {
      clone.mockRestore();
    }
    // Past the few copies kept in arrays, in a Map: sharing is kept all the same.
    const rows = Array.from({ length: 40 }, (_, i) => ({ i }));
    const many = { rows, again: rows[30], first: rows[0] };
    const manyCopy = wireClone(many, checkValue(many, "v")) as typeof many;
    expect(manyCopy).toEqual(many);
    expect(manyCopy.again).toBe(manyCopy.rows[30]);
    expect(manyCopy.first).toBe(manyCopy.rows[0]);
    expect(manyCopy.rows[0]).not.toBe(rows[0]);
    const pair = wireClone(cases[5], checkValue(cases[5], "v")) as unknown[];
    expect(pair[0]).toBe(pair[1]);
    const ring = wireClone(cycle, checkValue(cycle, "v")) as Record<string, unknown>;
    expect(ring.self).toBe(ring);
    expect(
      Object.is(
        (wireClone(cases[0], checkValue(cases[0], "v")) as { values: number[] }).values[1],
        -0,
      ),
    ).toBe(true);
  });

  it("copies shared memory and the bytes of typed arrays and buffers", () => {
    const shared = new Uint8Array(new SharedArrayBuffer(4));
    const v = { shared };
    const copy = wireClone(v, checkValue(v, "v")) as { shared: Uint8Array };
    shared[0] = 9;
    expect(copy.shared[0]).toBe(0);
    expect(copy.shared.buffer).toBeInstanceOf(ArrayBuffer);
    for (const top of [Buffer.from("ab"), new Int16Array([1, 2]), new ArrayBuffer(2)]) {
      const c = wireClone(top) as Uint8Array | ArrayBuffer;
      new Uint8Array(top instanceof ArrayBuffer ? top : top.buffer)[0] = 77;
      expect(new Uint8Array(c instanceof ArrayBuffer ? c : c.buffer)[0]).not.toBe(77);
      expect(Object.getPrototypeOf(c)).toBe(Object.getPrototypeOf(top));
    }
  });

  it("fails as sending would: a SerializationError", () => {
    for (const v of [() => 1, Symbol("s"), { f: () => 1 }, new SharedArrayBuffer(2)]) {
      expect(() => wireClone(v)).toThrow(SerializationError);
    }
  });

  it("checkedWireClone: the copy of data, or checkValue's problem (plain data in one walk)", () => {
    class Vec {
      x = 1;
    }
    let deep: unknown = 1;
    for (let i = 0; i <= 1000; i++) deep = [deep];
    const refused: unknown[] = [
      () => 1,
      Symbol("s"),
      { a: [new Vec()] },
      deep,
      { m: new Map([[1, () => 1]]) },
    ];
    for (const v of refused) {
      const got = checkedWireClone(v, "args[0]");
      expect(got.problem).toBe(checkValue(v, "args[0]").problem);
      expect(got.problem).not.toBeNull();
    }
    for (const v of [1, "s", { a: [1, { b: 2 }] }, new Map([[1, new Date(0)]]), Buffer.from("x")]) {
      const got = checkedWireClone(v, "args[0]");
      expect(got.problem).toBeNull();
      expect(got.copy).toEqual(deserialize(serialize(v)));
    }
  });
});
