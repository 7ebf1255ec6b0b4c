import { describe, expect, it } from "vitest";
import { roundHalfEven } from "./roundHalfEven.ts";

describe("roundHalfEven", () => {
  it("rounds exact ties to the even integer, as Python's round does", () => {
    // Python: [round(x) for x in (0.5, 1.5, 2.5, 3.5, 14.5, -0.5, -1.5, -2.5)]
    const ties = [0.5, 1.5, 2.5, 3.5, 14.5, -0.5, -1.5, -2.5];
    expect(ties.map(roundHalfEven)).toEqual([0, 2, 2, 4, 14, 0, -2, -2]);
  });

  it("rounds everything else to the nearest integer", () => {
    expect(roundHalfEven(2.4999999999999996)).toBe(2);
    expect(roundHalfEven(2.5000000000000004)).toBe(3);
    expect(roundHalfEven(0.49999999999999994)).toBe(0);
    expect(roundHalfEven(-2.7)).toBe(-3);
    expect(roundHalfEven(-0.2)).toBe(0);
    expect(roundHalfEven(7)).toBe(7);
    expect(roundHalfEven(2 ** 53 + 2)).toBe(2 ** 53 + 2);
  });

  it("never gives -0", () => {
    for (const x of [-0.5, -0.2, -0]) expect(Object.is(roundHalfEven(x), 0)).toBe(true);
  });

  it("passes NaN and infinities through", () => {
    expect(roundHalfEven(Number.NaN)).toBeNaN();
    expect(roundHalfEven(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(roundHalfEven(Number.NEGATIVE_INFINITY)).toBe(Number.NEGATIVE_INFINITY);
  });
});
