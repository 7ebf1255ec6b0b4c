import { describe, expect, it } from "vitest";
import { memoryOrderProblems } from "./memoryOrder.ts";

const DASK = { memoryTarget: 0.6, memorySpill: 0.7, memoryPause: 0.8, memoryTerminate: 0.95 };

describe("memoryOrderProblems", () => {
  it("finds nothing in Dask's defaults, equal shares, or thresholds turned off", () => {
    expect(memoryOrderProblems(DASK)).toEqual([]);
    expect(
      memoryOrderProblems({ ...DASK, memorySpill: 0.6, memoryPause: 0.95, memoryTerminate: 0.95 }),
    ).toEqual([]);
    expect(
      memoryOrderProblems({
        memoryTarget: 0.6,
        memorySpill: false,
        memoryPause: false,
        memoryTerminate: false,
      }),
    ).toEqual([]);
    expect(memoryOrderProblems({ ...DASK, memoryPause: false, memorySpill: 0.9 })).toEqual([]);
  });

  it("names each threshold out of order, and what it means", () => {
    expect(memoryOrderProblems({ ...DASK, memorySpill: 0.5 })).toEqual([
      "memory spill 0.5 is below target 0.6: spilling starts only beyond the target, as it spills down to it",
    ]);
    expect(memoryOrderProblems({ ...DASK, memoryPause: 0.97 })).toEqual([
      "memory pause 0.97 is above terminate 0.95: the worker is closed before it pauses",
    ]);
    expect(memoryOrderProblems({ ...DASK, memorySpill: 0.99 })).toEqual([
      "memory spill 0.99 is above pause 0.8: the worker pauses before it spills, and stays paused until its memory falls by itself",
      "memory spill 0.99 is above terminate 0.95: the worker is closed before it spills",
    ]);
  });
});
