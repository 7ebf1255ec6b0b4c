import { describe, expect, it } from "vitest";
import {
  describeValue,
  entryNotOf,
  isBoolean,
  isInteger,
  isNumber,
  isNumberList,
  isNumberOrNull,
  isRecord,
  isString,
  isStringList,
  isStringOrNull,
} from "./valueShapes.ts";

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

/** The samples `shape` takes. */
function taken(shape: (v: unknown) => boolean): unknown[] {
  return SAMPLES.filter(shape);
}

describe("value shapes", () => {
  it("take exactly the values of their shape", () => {
    expect(taken(isString)).toEqual(["", "x"]);
    expect(taken(isStringOrNull)).toEqual([null, "", "x"]);
    expect(taken(isNumber)).toEqual([0, 1.5, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(taken(isNumberOrNull)).toEqual([null, 0, 1.5, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(taken(isInteger)).toEqual([0]);
    expect(taken(isBoolean)).toEqual([true]);
    // The empty list is a list of anything.
    expect(taken(isStringList)).toEqual([[], ["a"]]);
    expect(taken(isNumberList)).toEqual([[], [1, Number.NaN]]);
    expect(taken(isRecord)).toEqual([{}, { a: 1 }, new Map()]);
  });

  it("find the first entry of a map or an object whose value is of another shape", () => {
    expect(entryNotOf({ a: 1, b: "2", c: "3" }, isNumber)).toEqual(["b", "2"]);
    expect(
      entryNotOf(
        new Map<unknown, unknown>([
          [1, 1],
          [2, null],
        ]),
        isNumber,
      ),
    ).toEqual([2, null]);
    expect(entryNotOf({ a: 1 }, isNumber)).toBeUndefined();
    expect(entryNotOf(new Map(), isNumber)).toBeUndefined();
  });
});

describe("describeValue", () => {
  it("names the kind of a bad value, then shows it", () => {
    expect(SAMPLES.map(describeValue)).toEqual([
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
    expect(describeValue(cyclic)).toBe("an object ([object Object])");
    expect(describeValue("x".repeat(500)).length).toBeLessThan(80);
  });
});
