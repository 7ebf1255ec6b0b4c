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

  it("sort numerically, not as text", () => {
    expect(median([10, 9, 2])).toBe(9);
    expect(quantile([10, 9, 2], 0)).toBe(2);
  });

  it("quantile takes the nearest rank, and clamps q to 0..1", () => {
    expect(quantile([1, 2, 3, 4, 5], 0.9)).toBe(5); // rank 3.6 rounds to 4
    expect(quantile([1, 2, 3, 4, 5], 0.6)).toBe(3); // rank 2.4 rounds to 2
    expect(quantile([1, 2, 3], 2)).toBe(3);
    expect(quantile([1, 2, 3], -1)).toBe(1);
  });

  it("round defaults to whole numbers", () => {
    expect(round(1.6)).toBe(2);
  });
});
