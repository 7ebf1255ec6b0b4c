import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { SerializationError } from "../comm/errors.ts";
import { checkValue } from "../protocol/values.ts";
import { wireClone } from "./wireClone.ts";

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
});
