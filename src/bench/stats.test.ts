import { describe, expect, it } from "vitest";
import { median, quantile, round } from "./stats.ts";

describe("stats", () => {
  it("median, quantile and round", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([5, 1, 4, 2, 3], 0.25)).toBe(2);
    expect(quantile([5, 1, 4, 2, 3], 1)).toBe(5);
    expect(round(1.23456, 2)).toBe(1.23);
  });
});
