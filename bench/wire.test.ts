import { describe, expect, it } from "vitest";
import { MAX_BATCH, wireOptions } from "./wire.ts";

describe("bench:wire", () => {
  it("checks its options: a --batch of at most MAX_BATCH messages", () => {
    expect(wireOptions({ runs: "9", batch: "1000" })).toEqual({ runs: 9, batch: 1000 });
    expect(wireOptions({ runs: "1", batch: String(MAX_BATCH) }).batch).toBe(100_000);
    expect(() => wireOptions({ runs: "1", batch: "100000000" })).toThrow(
      "--batch must be at most 100000, got 100000000",
    );
    expect(() => wireOptions({ runs: "0", batch: "10" })).toThrow(
      "--runs must be a positive integer",
    );
  });
});
