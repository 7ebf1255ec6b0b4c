import { expect, it } from "vitest";
import { memoryLimitOption, noMemoryLimit } from "./memoryLimitOption.ts";

it("reads sizes and auto, and bytes in a bare number beyond 1", () => {
  expect(memoryLimitOption("4GiB")).toBe(4 * 2 ** 30);
  expect(memoryLimitOption("auto")).toBe("auto");
  expect(memoryLimitOption("1000000")).toBe(1_000_000);
  expect(memoryLimitOption("100e9")).toBe(100e9);
  expect(memoryLimitOption("1B")).toBe(1);
  expect(() => memoryLimitOption("lots")).toThrow(
    '--memory-limit must be a size such as 64MiB or 4GB, got "lots"',
  );
});

it("reads a bare number up to 1 as Dask does: a share of the machine's memory, 0 no limit", () => {
  // Read as bytes, Dask's --memory-limit 1 (all the memory) was a 1-byte budget that
  // failed every task with a MemoryError; 0 and 0.5 were refused.
  for (const [text, share] of [
    ["0", 0],
    ["0.5", 0.5],
    ["1", 1],
    ["1.0", 1],
    [" .25", 0.25],
    ["5e-1", 0.5],
    ["+0.5", 0.5],
  ] as const) {
    expect(memoryLimitOption(text)).toBe(share);
  }
  expect(noMemoryLimit("0")).toBe(true);
  expect(noMemoryLimit("0.0")).toBe(true);
  expect(noMemoryLimit(undefined)).toBe(true);
  expect(noMemoryLimit("0.5")).toBe(false);
  expect(noMemoryLimit("2GiB")).toBe(false);
  // Not bare numbers: a sign, or a unit, is a size, and refused as one.
  expect(() => memoryLimitOption("-0.5")).toThrow(/--memory-limit must be a size/);
  expect(() => memoryLimitOption("0.5B")).toThrow(/--memory-limit must be a/);
});
