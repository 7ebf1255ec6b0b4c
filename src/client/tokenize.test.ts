import fc from "fast-check";
import { describe, expect, it } from "vitest";
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

  it("says which arguments cannot be sent", () => {
    expect(() => tokenize("f", [() => 1])).toThrow(/submit\(f\): the arguments cannot be sent/);
  });
});
