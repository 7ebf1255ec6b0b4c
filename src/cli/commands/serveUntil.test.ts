import { describe, expect, it } from "vitest";
import { parseResources } from "./serveUntil.ts";

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
