import { describe, expect, it } from "vitest";
import type { Client } from "../client/client.ts";
import { chainGraph, mapGraph, scaledGraph, shuffleGraph, spawnGraph } from "./clusterGraphs.ts";

/** The number of keys in the graph `g.run` submits (through a client that only counts). */
async function submittedKeys(name: string, scale: number): Promise<number> {
  let keys = -1;
  const client = {
    async get(graph: Map<string, unknown>, o: { keys: string[] }) {
      keys = graph.size;
      return Object.fromEntries(o.keys.map((k) => [k, 0]));
    },
  };
  await scaledGraph(name, scale).run(client as unknown as Client, "x-");
  return keys;
}

describe("the cluster benchmark's graphs", () => {
  it("tree reports the tasks it submits, also when its leaves are not a power of two", async () => {
    // 8192, 819, 410, 4915, 3 and 2 leaves: a level of odd length adds an add(x, 0) node.
    for (const scale of [1, 0.1, 0.05, 0.6, 0.0004, 0]) {
      const g = scaledGraph("tree", scale);
      expect({ scale, tasks: g.tasks }).toEqual({
        scale,
        tasks: await submittedKeys("tree", scale),
      });
    }
    expect(scaledGraph("tree", 1).tasks).toBe(2 * 8_192 - 1);
    expect(scaledGraph("tree", 0.1).tasks).toBe(1_642);
  });

  it("shuffle and chain report the tasks they submit", async () => {
    for (const name of ["shuffle", "chain"]) {
      expect(scaledGraph(name, 0.05).tasks).toBe(await submittedKeys(name, 0.05));
    }
  });
});

describe("the cluster benchmark's answer checks", () => {
  it("map wants exactly 1..n, in order", () => {
    expect(mapGraph(3).check([1, 2, 3])).toBeNull();
    expect(mapGraph(3).check([1, 2])).toBe("map: expected 3 results");
    expect(mapGraph(3).check([0, 2, 3])).toBe("map: result 0 is 0");
  });

  it("shuffle wants n partitions, each value in its own, and every value", () => {
    const g = shuffleGraph(2, 2);
    expect(
      g.check([
        [0, 2],
        [1, 3],
      ]),
    ).toBeNull();
    expect(g.check([[0, 2]])).toBe("shuffle: expected 2 partitions");
    expect(
      g.check([
        [0, 1],
        [2, 3],
      ]),
    ).toBe("shuffle: 1 in partition 0");
    expect(g.check([[0], [1, 3]])).toBe("shuffle: values: expected 4, got 3");
  });

  it("spawn wants 2^depth from 2^(depth+1) - 1 tasks; a number in a string is no answer", () => {
    expect(spawnGraph(3).tasks).toBe(15);
    expect(spawnGraph(3).check(8)).toBeNull();
    expect(spawnGraph(3).check(16)).toBe("spawn: expected 8, got 16");
    expect(chainGraph(5).check("5")).toBe("chain: expected 5, got 5");
  });

  it("scaled sizes are at least 2, and a module without the graph's function is refused", () => {
    expect(scaledGraph("map", 0).tasks).toBe(2);
    expect(() => scaledGraph("map", 1, {})).toThrow("no mapGraph among the graph functions");
  });
});
