import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageSegments } from "../comm/messageLayout.ts";
import { encodeMessage, OUT_OF_BAND_MIN_BYTES } from "../comm/wireCodec.ts";
import { tokenize } from "./tokenize.ts";

const scalar = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.boolean(),
  fc.bigInt(),
  fc.constant(null),
  fc.constant(undefined),
);

describe("tokenize", () => {
  it("gives the same key for the same function and arguments", () => {
    expect(tokenize("inc", [1])).toBe(tokenize("inc", [1]));
    expect(tokenize("inc", [{ a: [1, 2] }])).toBe(tokenize("inc", [{ a: [1, 2] }]));
    expect(tokenize("inc", [1])).toMatch(/^inc-[0-9a-f]{32}$/);
  });

  it("tells apart objects whose keys are in another order, which a function may read", () => {
    // Dask's tokenize sorts a dict's keys; here the order is part of the value
    // (Object.keys, JSON.stringify and for…in see it), so no result is shared.
    expect(tokenize("f", [{ a: 1, b: 2 }])).not.toBe(tokenize("f", [{ b: 2, a: 1 }]));
  });

  it("tells apart arguments that print alike", () => {
    const keys = [
      tokenize("f", [1]),
      tokenize("f", ["1"]),
      tokenize("f", [1n]),
      tokenize("f", [true]),
      tokenize("f", ["true"]),
      tokenize("f", [null]),
      tokenize("f", [undefined]),
      tokenize("f", []),
      tokenize("f", [0]),
      tokenize("f", [-0]),
      tokenize("f", ["a b"]),
      tokenize("f", ["a", "b"]),
      tokenize("f", ["a s1:b"]),
      tokenize("f", ["\uD800"]),
      tokenize("f", ["\uFFFD"]),
      tokenize("f", ["\uDC00\uD800"]),
      tokenize("f", [[1]]),
      tokenize("f", [{ x: 1 }]),
      tokenize("g", [1]).replace(/^g/, "f"),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("is injective on lists of scalars (property)", () => {
    fc.assert(
      fc.property(
        fc.array(scalar, { maxLength: 4 }),
        fc.array(scalar, { maxLength: 4 }),
        (a, b) => {
          const same = a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
          expect(tokenize("f", a) === tokenize("f", b)).toBe(same);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("hashes a large byte array where it lies: the bytes of its message, as TCP lays them out", () => {
    const n = OUT_OF_BAND_MIN_BYTES;
    const a = Float64Array.from({ length: n / 8 }, (_, i) => i);
    const args = [a, { b: Buffer.alloc(n, 1) }, 3];
    // The whole message copied into one buffer, then hashed: the same key.
    const whole = Buffer.concat(messageSegments(encodeMessage(["f", args])));
    expect(whole.length).toBeGreaterThan(2 * n);
    const sha = createHash("sha1").update(whole).digest("hex").slice(0, 32);
    expect(tokenize("f", args)).toBe(`f-${sha}`);
    // The same values the same key, wherever their bytes lie (a view with an offset).
    const moved = new Float64Array(new ArrayBuffer(n + 8), 8, n / 8);
    moved.set(a);
    expect(tokenize("f", [moved, { b: Buffer.alloc(n, 1) }, 3])).toBe(tokenize("f", args));
    // Every byte counts, and so do the class, the layout around and the other arguments.
    const changed = a.slice();
    changed[n / 8 - 1] = -1;
    const keys = [
      tokenize("f", args),
      tokenize("f", [changed, { b: Buffer.alloc(n, 1) }, 3]),
      tokenize("f", [new Uint8Array(a.buffer), { b: Buffer.alloc(n, 1) }, 3]),
      tokenize("f", [a, { b: new Uint8Array(n).fill(1) }, 3]),
      tokenize("f", [a, { b: Buffer.alloc(n, 1) }, 4]),
      tokenize("f", [{ b: Buffer.alloc(n, 1) }, a, 3]),
      tokenize("f", [a.subarray(1), { b: Buffer.alloc(n + 8, 1) }, 3]),
      tokenize("f", [new Float64Array(n / 8 - 1), { b: Buffer.alloc(n, 1) }, 3]),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("says which arguments cannot be sent", () => {
    expect(() => tokenize("f", [() => 1])).toThrow(/^submit\(f\): the arguments cannot be sent/);
  });

  it("names the call the user made: map and submitWith tokenize too", () => {
    expect(() => tokenize("f", [() => 1], "map")).toThrow(
      /^map\(f\): the arguments cannot be sent/,
    );
    expect(() => tokenize("f", [() => 1], "submitWith")).toThrow(
      /^submitWith\(f\): the arguments cannot be sent/,
    );
  });
});
