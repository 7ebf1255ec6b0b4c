import { describe, expect, it } from "vitest";
import { BENCH_GRAPH_SIZES, checkGraphName, checkGraphScale } from "./graphNames.ts";

describe("the cluster benchmark's graph names", () => {
  it("are Dask's four, spawn and skew; another name is refused, naming them", () => {
    expect(Object.keys(BENCH_GRAPH_SIZES)).toEqual([
      "map",
      "tree",
      "shuffle",
      "chain",
      "spawn",
      "skew",
    ]);
    expect(checkGraphName("chain")).toBe("chain");
    expect(() => checkGraphName("maps")).toThrow(
      'unknown graph "maps": expected map, tree, shuffle, chain, spawn or skew',
    );
  });

  it("take --scale up to 10, spawn (tasks doubling with each level of depth) up to 2", () => {
    expect(checkGraphScale("tree", 10)).toBe("tree");
    expect(checkGraphScale("spawn", 2)).toBe("spawn");
    expect(() => checkGraphScale("spawn", 2.5)).toThrow(
      "--scale 2.5 is too large for spawn: at most 2 (its tasks double with each level of depth)",
    );
  });
});
