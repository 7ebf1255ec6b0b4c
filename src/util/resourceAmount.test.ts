import { describe, expect, it } from "vitest";
import { isResourceAmount } from "./resourceAmount.ts";

describe("isResourceAmount", () => {
  it("takes finite numbers from 0 up, nothing else", () => {
    for (const v of [0, 0.5, 2, 1e9]) expect(isResourceAmount(v), String(v)).toBe(true);
    for (const v of [-1, Number.POSITIVE_INFINITY, Number.NaN, "1", null, 1n]) {
      expect(isResourceAmount(v), String(v)).toBe(false);
    }
  });
});
