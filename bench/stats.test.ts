import { describe, expect, it } from "vitest";
import { median, medianInterval95, quantile, round } from "./stats.ts";

describe("stats", () => {
  it("median, quantile and round", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([5, 1, 4, 2, 3], 0.25)).toBe(2);
    expect(quantile([5, 1, 4, 2, 3], 1)).toBe(5);
    expect(round(1.23456, 2)).toBe(1.23);
  });

  it("the median's 95% interval spans the middle order statistics, wider for fewer values", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, unsorted
    expect(medianInterval95(hundred)).toEqual([41, 60]);
    const ten = Array.from({ length: 10 }, (_, i) => i + 1);
    expect(medianInterval95(ten)).toEqual([2, 9]);
    expect(medianInterval95([7])).toEqual([7, 7]);
  });
});
