import { expect, it } from "vitest";
import { splitKeyHint } from "./splitKeyHint.ts";

it("names the keys holding commas that a --keys list cut, as --key options", () => {
  const graph = { "('x', 0)": 1, "('x', 1)": 2, y: 3 };
  expect(splitKeyHint("('x', 0)", graph)).toBe(
    ` (--keys splits its list at commas, cutting the graph's key "('x', 0)": name it with --key "('x', 0)")`,
  );
  expect(splitKeyHint("y,('x', 0),('x', 1)", new Map(Object.entries(graph)))).toBe(
    ` (--keys splits its list at commas, cutting the graph's keys "('x', 0)", "('x', 1)": name each with --key "('x', 0)" --key "('x', 1)")`,
  );
});

it("says nothing when no key of the graph was cut", () => {
  expect(splitKeyHint(undefined, { "a,b": 1 })).toBe("");
  expect(splitKeyHint("z", { "a,b": 1 })).toBe("");
  expect(splitKeyHint("a,c", { "a,b": 1, a: 2 })).toBe("");
});
