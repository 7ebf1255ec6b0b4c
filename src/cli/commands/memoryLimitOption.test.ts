import { expect, it } from "vitest";
import { memoryLimitOption } from "./memoryLimitOption.ts";

it("reads sizes and auto, and bytes in a bare number beyond 1", () => {
  expect(memoryLimitOption("4GiB")).toBe(4 * 2 ** 30);
  expect(memoryLimitOption("auto")).toBe("auto");
  expect(memoryLimitOption("1000000")).toBe(1_000_000);
  expect(memoryLimitOption("1B")).toBe(1);
});

it("refuses the bare numbers Dask reads as a share of the machine's memory, saying so", () => {
  for (const text of ["0", "0.5", "1", "1.0", " .25"]) {
    expect(() => memoryLimitOption(text)).toThrow(
      `--memory-limit ${text}: a bare number is bytes here, where Dask reads one up to 1 as a share of the machine's memory (0: no limit): give a size such as 4GiB, or auto; no limit is the default (leave the option out)`,
    );
  }
  expect(() => memoryLimitOption("lots")).toThrow(
    '--memory-limit must be a size such as 64MiB or 4GB, got "lots"',
  );
});
