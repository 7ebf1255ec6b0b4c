import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { deserializeOwned } from "./ownedDeserialize.ts";

describe("deserializeOwned", () => {
  it("copies a small typed array, Buffer or DataView out of the bytes it was read from", () => {
    // (A Uint8Array: Node copies a view its offset in the bytes misaligns, whatever its size.)
    const big = new Uint8Array(1_600_000).fill(5);
    const value = {
      small: Uint8Array.from([1, 2, 3]),
      nested: [{ i32: Int32Array.from([-1, 7]) }],
      buf: Buffer.from("hi"),
      dv: new DataView(Uint8Array.from([9, 8, 7, 6]).buffer),
      big,
    };
    const bytes = serialize(value);
    // What Node's own deserializer does: each a view of the whole 1.6 MB.
    expect((deserialize(bytes) as typeof value).small.buffer.byteLength).toBeGreaterThan(1.6e6);
    const got = deserializeOwned(bytes) as typeof value;
    const { big: gotBig, ...rest } = got;
    const { big: _, ...restValue } = value;
    expect(rest).toEqual(restValue);
    expect(Buffer.from(gotBig).equals(Buffer.from(big))).toBe(true);
    expect(got.small.buffer.byteLength).toBe(3);
    expect(got.nested[0].i32.buffer.byteLength).toBe(8);
    expect(Buffer.isBuffer(got.buf)).toBe(true);
    expect(got.buf.buffer.byteLength).toBe(2);
    expect(got.dv).toBeInstanceOf(DataView);
    expect(got.dv.buffer.byteLength).toBe(4);
    // The large one fills most of the bytes: read in place, not copied.
    expect(gotBig.buffer).toBe(bytes.buffer);
  });

  it("reads two large arrays of one size in place: together they fill the bytes", () => {
    // Each keeps the other and the value's framing behind it: not a small part of the bytes.
    const value = { a: new Uint8Array(1_000_000).fill(1), b: new Uint8Array(1_000_000).fill(2) };
    const bytes = serialize(value);
    const got = deserializeOwned(bytes) as typeof value;
    // (Booleans: a failure printing two 1 MB buffers would overwhelm the runner.)
    expect(got.a.buffer === bytes.buffer).toBe(true);
    expect(got.b.buffer === bytes.buffer).toBe(true);
    expect(Buffer.from(got.a).equals(Buffer.from(value.a))).toBe(true);
    expect(Buffer.from(got.b).equals(Buffer.from(value.b))).toBe(true);
  });

  it("keeps what the structured clone keeps: shared views, and the values around them", () => {
    const shared = Uint16Array.from([1, 2]);
    const cyc: Record<string, unknown> = { shared };
    cyc.self = cyc;
    const got = deserializeOwned(
      serialize({ a: shared, b: shared, cyc, big: new Uint8Array(100_000) }),
    ) as {
      a: Uint16Array;
      b: Uint16Array;
      cyc: Record<string, unknown>;
    };
    expect(got.a).toBe(got.b);
    expect(got.cyc.shared).toBe(got.a);
    expect(got.cyc.self).toBe(got.cyc);
    expect(got.a).toEqual(shared);
  });
});
