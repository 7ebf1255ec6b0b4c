import { describe, expect, it } from "vitest";
import { byteSize, parseResources } from "./serveUntil.ts";

describe("parseResources (weft worker --resources)", () => {
  it("reads NAME=AMOUNT pairs", () => {
    expect(parseResources("GPU=1,MEM=8e9")).toEqual({ GPU: 1, MEM: 8e9 });
    expect(parseResources("GPU=0")).toEqual({ GPU: 0 });
    expect(parseResources("")).toEqual({});
  });

  it("refuses a pair without an amount instead of reading it as 0", () => {
    for (const bad of ["GPU=", "GPU= ", "GPU", "=1", "GPU=x", "GPU=-1", "GPU=1,MEM="]) {
      expect(() => parseResources(bad), bad).toThrow(/expected NAME=AMOUNT/);
    }
  });
});

describe("byteSize (--max-frame-bytes, --max-message-bytes)", () => {
  it("reads sizes as Dask writes them", () => {
    expect(byteSize("--max-frame-bytes", "64MiB")).toBe(64 * 2 ** 20);
    expect(byteSize("--max-frame-bytes", "4GB")).toBe(4e9);
    expect(byteSize("--max-frame-bytes", "1e6")).toBe(1e6);
  });

  it("refuses an empty size instead of reading it as 1 byte", () => {
    for (const bad of ["", " ", "x", "0"]) {
      expect(() => byteSize("--max-message-bytes", bad), JSON.stringify(bad)).toThrow(
        /--max-message-bytes must be a size such as 64MiB or 4GB/,
      );
    }
  });
});
