import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { treeGraph } from "../src/sim/benchmarkGraphs.ts";
import {
  benchOccupancy,
  OCCUPANCY_CASES,
  occupancyBenchOptions,
  runOccupancyCase,
  schedulerOf,
} from "./occupancy.ts";

describe("bench:occupancy", () => {
  it("drives a scheduler through a graph to the end and counts the reads of occupancy", () => {
    const r = runOccupancyCase(
      { name: "small", workers: 3, threads: 2, graph: () => treeGraph(64) },
      { countReads: true },
    );
    expect(r.tasks).toBe(127);
    expect(r.seconds).toBeGreaterThan(0);
    expect(r.cpuSeconds).toBeGreaterThan(0);
    // Placing each sum reads the occupancy of the workers it weighs.
    expect(r.reads).toBeGreaterThan(0);
    expect(
      runOccupancyCase({ name: "x", workers: 2, threads: 1, graph: () => treeGraph(8) }).reads,
    ).toBeNull();
  });

  it("gives no figure for a graph that does not end with its wanted keys in memory", () => {
    const graph = () => {
      const w = treeGraph(4);
      // The first leaf takes the root as input: a cycle, which the scheduler refuses.
      return { ...w, tasks: w.tasks.map((t, i) => (i === 0 ? { ...t, deps: [6] } : t)) };
    };
    expect(() => runOccupancyCase({ name: "stuck", workers: 2, threads: 1, graph })).toThrow(
      "stuck: sum-2-0 ended forgotten",
    );
  });

  it("emits a line a case with the medians", () => {
    const lines: string[] = [];
    const small = { name: "small", workers: 2, threads: 1, graph: () => treeGraph(16) };
    benchOccupancy({ cases: [small], runs: 3 }, (l) => lines.push(l));
    const row = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(row).toMatchObject({
      bench: "occupancy",
      case: "small",
      workers: 2,
      tasks: 31,
      runs: 3,
    });
    expect(row.allCpu).toHaveLength(3);
  });

  it("pairs each run with one of another checkout's scheduler, given one", async () => {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const base = await schedulerOf(root);
    const lines: string[] = [];
    const small = { name: "small", workers: 2, threads: 1, graph: () => treeGraph(16) };
    benchOccupancy({ cases: [small], runs: 2 }, (l) => lines.push(l), base);
    const row = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(row.allBaseCpu).toHaveLength(2);
    expect(row.medianRatio).toEqual(expect.any(Number));
    await expect(schedulerOf("/nonexistent")).rejects.toThrow(
      /^--base \/nonexistent: no scheduler state machine there /,
    );
  });

  it("checks its options", () => {
    const o = occupancyBenchOptions({ cases: "one-fn, tree-2", runs: "2" });
    expect(o.cases.map((c) => c.name)).toEqual(["one-fn", "tree-2"]);
    expect(o.runs).toBe(2);
    expect(() => occupancyBenchOptions({ cases: "nope", runs: "2" })).toThrow(
      `--cases: unknown case 'nope'; known: ${OCCUPANCY_CASES.map((c) => c.name).join(", ")}`,
    );
    expect(() => occupancyBenchOptions({ cases: "tree-2", runs: "0" })).toThrow(
      "--runs must be a positive integer",
    );
  });
});
