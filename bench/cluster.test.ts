import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { benchCluster } from "../src/bench/clusterBench.ts";
import {
  chainGraph,
  mapGraph,
  shuffleGraph,
  skewGraph,
  treeGraph,
} from "../src/bench/clusterGraphs.ts";
import type { Client } from "../src/client/client.ts";
import { LocalCluster } from "../src/client/localCluster.ts";

const TASKS = new URL("../src/bench/clusterTasks.ts", import.meta.url).href;
let cluster: LocalCluster;
let client: Client;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    workers: 2,
    executor: "inline",
    taskModules: [TASKS],
    validate: true,
    logger: pino({ level: "silent" }),
  });
  client = await cluster.client();
});
afterAll(async () => {
  cluster.validateState();
  await cluster.close();
});

describe("the benchmark graphs compute the right answers (validation on)", () => {
  it.each([
    ["map", mapGraph(2_000)],
    ["tree (a power of two)", treeGraph(1_024)],
    ["tree (odd levels)", treeGraph(1_000)],
    ["shuffle", shuffleGraph(16, 100)],
    ["chain", chainGraph(500)],
    ["skew", skewGraph(20, 2)],
  ])("%s", async (_name, graph) => {
    const answer = await graph.run(client, `${graph.name}-${graph.tasks}-`);
    expect(graph.check(answer)).toBeNull();
    expect(graph.check("nonsense")).not.toBeNull();
  });

  it("the shuffle moves data between the workers", async () => {
    const before = await client.counters();
    expect(shuffleGraph(8, 40).check(await shuffleGraph(8, 40).run(client, "again-"))).toBeNull();
    expect((await client.counters()).keysTransferred).toBeGreaterThan(before.keysTransferred);
  });
});

describe("npm run bench:cluster", () => {
  it("prints a configuration line and one checked line per graph, with Dask's figures", async () => {
    const records: Record<string, unknown>[] = [];
    await benchCluster(
      {
        runs: 1,
        warmup: 0,
        graphs: ["map", "tree", "shuffle", "chain"],
        executor: "inline",
        saturation: 1.1,
        scale: 0.02,
      },
      (r) => records.push(r),
    );
    expect(records[0]).toMatchObject({ bench: "cluster", workers: 2, threadsPerWorker: 1 });
    // Fresh pages fault on Linux; the probe reports null only if none did.
    expect(records[0].freshPageMicros === null || Number(records[0].freshPageMicros) > 0).toBe(
      true,
    );
    expect(records.slice(1).map((r) => r.graph)).toEqual(["map", "tree", "shuffle", "chain"]);
    for (const r of records.slice(1)) {
      expect(r).toMatchObject({ checked: true, daskBestTasksPerS: expect.any(Number) });
      // Dask's figures are for the full-size graphs: no ratio to them at another scale.
      expect(r).not.toHaveProperty("ratioToDaskBest");
      expect(r).not.toHaveProperty("ratioToDaskDefault");
      expect(r.ratioToDask).toBe("none at --scale 0.02: Dask's figures are for scale 1");
      expect(r.tasksPerS).toBeGreaterThan(0);
      expect(r.minorFaultsPerRun).toBeGreaterThanOrEqual(0);
      expect(r.runsMinorFaults).toHaveLength(1); // one per timed run, beside runsSeconds
      // The first run, cold: here (no warm-up) the one timed run.
      expect(r.firstRunTasksPerS).toBe(r.tasksPerS);
      expect(r.systemCpuSecondsPerTask).toBeGreaterThanOrEqual(0);
    }
    expect(records[4].msPerStep).toBeGreaterThan(0);
  });

  it("gives the ratios to Dask's figures at scale 1", async () => {
    const records: Record<string, unknown>[] = [];
    await benchCluster(
      { runs: 1, warmup: 0, graphs: ["chain"], executor: "inline", saturation: 1.1, scale: 1 },
      (r) => records.push(r),
    );
    expect(records[1]).toMatchObject({
      graph: "chain",
      tasks: 2_000,
      ratioToDaskBest: expect.any(Number),
      ratioToDaskDefault: expect.any(Number),
    });
    expect(records[1]).not.toHaveProperty("ratioToDask");
  });
});
