import { describe, expect, it } from "vitest";
import { topRows } from "./topRows.ts";

describe("topRows", () => {
  const byValueDown = (r: { v: number }) => [r.v];

  it("keeps the rows ranked first, in their order, and counts the others", () => {
    const rows = [
      { k: "a", v: 1 },
      { k: "b", v: 9 },
      { k: "c", v: 5 },
      { k: "d", v: 7 },
    ];
    const { shown, more } = topRows(rows, 2, byValueDown);
    expect(shown.map((r) => r.k)).toEqual(["b", "d"]);
    expect(more).toBe(2);
  });

  it("ranks by the first number, then the next", () => {
    const rows = [
      [0, 5],
      [1, 0],
      [0, 9],
      [0, 7],
    ];
    expect(topRows(rows, 3, (r) => r).shown).toEqual([
      [1, 0],
      [0, 9],
      [0, 7],
    ]);
  });

  it("keeps the first of rows ranked alike, and all rows within the limit", () => {
    const rows = [1, 2, 3, 4].map((k) => ({ k, v: 0 }));
    expect(topRows(rows, 3, byValueDown).shown.map((r) => r.k)).toEqual([1, 2, 3]);
    expect(topRows(rows, 4, byValueDown)).toEqual({ shown: rows, more: 0 });
    expect(topRows([], 0, byValueDown)).toEqual({ shown: [], more: 0 });
  });
});
