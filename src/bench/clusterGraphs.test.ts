import { describe, expect, it } from "vitest";
import type { Client } from "../client/client.ts";
import { scaledGraph } from "./clusterGraphs.ts";

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
