import { describe, expect, it } from "vitest";
import { clusterRunOptions, nonNegativeInteger, positiveInteger } from "./benchOptions.ts";

const run = { warmup: "3", saturation: "1.1", scale: "1" };

describe("the benchmarks' shared options", () => {
  it("an empty or blank value is refused, not read as 0", () => {
    for (const value of ["", " ", "\t"]) {
      expect(() => nonNegativeInteger(value, "--warmup")).toThrow(
        "--warmup must be an integer >= 0",
      );
      expect(() => positiveInteger(value, "--runs")).toThrow("--runs must be a positive integer");
      expect(() => clusterRunOptions({ ...run, warmup: value })).toThrow("--warmup");
      expect(() => clusterRunOptions({ ...run, saturation: value })).toThrow("--saturation");
      expect(() => clusterRunOptions({ ...run, scale: value })).toThrow("--scale");
    }
    expect(nonNegativeInteger("0", "--warmup")).toBe(0);
    expect(positiveInteger("5", "--runs")).toBe(5);
  });
});
