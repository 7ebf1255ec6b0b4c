import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { LocalCluster } from "../client/localCluster.ts";
import { spawnGraph } from "./clusterGraphs.ts";
import { CLUSTER_TASKS } from "./clusterTasks.ts";

describe("spawnTree", () => {
  // No other test runs the spawn graph: its tasks submit tasks, so it needs a cluster.
  it("submits two children per level down to depth 0, whose leaves count 1 each", async () => {
    const cluster = await LocalCluster.start({
      workers: 2,
      executor: "inline",
      taskModules: [CLUSTER_TASKS],
      logger: pino({ level: "silent" }),
    });
    try {
      const client = await cluster.client();
      const g = spawnGraph(3);
      expect(await g.run(client, "spawn-")).toBe(8);
    } finally {
      await cluster.close();
    }
  }, 60_000);
});
