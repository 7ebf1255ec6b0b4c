import { describe, expect, it } from "vitest";
import * as shape from "./valueShapes.ts";

const SAMPLES: unknown[] = [
  undefined,
  null,
  "",
  "x",
  0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1n,
  true,
  [],
  ["a"],
  [1, Number.NaN],
  ["a", 1],
  [1n],
  {},
  { a: 1 },
  new Map(),
  Symbol("s"),
];

/** The samples `test` takes. */
function taken(test: (v: unknown) => boolean): unknown[] {
  return SAMPLES.filter(test);
}

describe("value shapes", () => {
  it("take exactly the values of their shape", () => {
    expect(taken(shape.isString)).toEqual(["", "x"]);
    expect(taken(shape.isStringOrNull)).toEqual([null, "", "x"]);
    expect(taken(shape.isNumber)).toEqual([0, 1.5, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(taken(shape.isNumberOrNull)).toEqual([
      null,
      0,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ]);
    expect(taken(shape.isInteger)).toEqual([0]);
    expect(taken(shape.isBoolean)).toEqual([true]);
    // The empty list is a list of anything.
    expect(taken(shape.isStringList)).toEqual([[], ["a"]]);
    expect(taken(shape.isNumberList)).toEqual([[], [1, Number.NaN]]);
    expect(taken(shape.isRecord)).toEqual([{}, { a: 1 }, new Map()]);
  });

  it("find the first entry of a map or an object whose value is of another shape", () => {
    expect(shape.entryNotOf({ a: 1, b: "2", c: "3" }, shape.isNumber)).toEqual(["b", "2"]);
    expect(
      shape.entryNotOf(
        new Map<unknown, unknown>([
          [1, 1],
          [2, null],
        ]),
        shape.isNumber,
      ),
    ).toEqual([2, null]);
    expect(shape.entryNotOf({ a: 1 }, shape.isNumber)).toBeUndefined();
    expect(shape.entryNotOf(new Map(), shape.isNumber)).toBeUndefined();
  });
});

describe("describeValue", () => {
  it("names the kind of a bad value, then shows it", () => {
    expect(SAMPLES.map(shape.describeValue)).toEqual([
      "nothing",
      "null",
      'string ""',
      'string "x"',
      "number 0",
      "number 1.5",
      "number NaN",
      "number Infinity",
      "bigint 1n",
      "boolean true",
      "a list ([])",
      'a list (["a"])',
      'a list ([1,"NaN"])',
      'a list (["a",1])',
      'a list (["1n"])',
      "an object ({})",
      'an object ({"a":1})',
      "an object ({})",
      "symbol Symbol(s)",
    ]);
  });

  it("stays short and never throws", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(shape.describeValue(cyclic)).toBe("an object ([object Object])");
    expect(shape.describeValue("x".repeat(500)).length).toBeLessThan(80);
  });
});
