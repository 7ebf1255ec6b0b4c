import { describe, expect, it } from "vitest";
import { benchSimScale, main, simScaleOptions } from "./sim-scale.ts";

describe("bench:sim", () => {
  it("simulates one cluster per size and reports its cost per task", () => {
    const lines: string[] = [];
    benchSimScale({ workers: [2, 3], perWorker: 10, workload: "tree", validate: false }, (l) =>
      lines.push(l),
    );
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.workers)).toEqual([2, 3]);
    for (const r of rows) {
      expect(r.ok).toBe(true);
      expect(r.failure).toBeNull();
      expect(r.workerStimuliPerTask).toBeGreaterThan(1);
    }
    // The tree is sized to hold about perWorker × workers tasks.
    for (const [i, n] of [20, 30].entries()) {
      expect(rows[i].tasks).toBeGreaterThanOrEqual(n - 1);
      expect(rows[i].tasks).toBeLessThanOrEqual(n + 1);
    }
  });

  it("counts the runs that failed, for main to exit 1: a wrong answer is no figure", () => {
    const lines: string[] = [];
    const failed = benchSimScale(
      { workers: [2], perWorker: 10, workload: "map", validate: false },
      (l) => lines.push(l),
      { variant: "wrong-value" },
    );
    const row = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(row.ok).toBe(false);
    expect(row.failure).toEqual(expect.any(String));
    expect(failed).toBe(1);
    expect(
      benchSimScale({ workers: [2], perWorker: 10, workload: "map", validate: false }, () => {}),
    ).toBe(0);
  });

  it("validates as weft sim does with --validate, and says so in its lines", () => {
    const lines: string[] = [];
    const broken = { variant: "corrupt-occupancy" };
    const args = { workers: [2], perWorker: 20, workload: "map" as const };
    expect(benchSimScale({ ...args, validate: true }, (l) => lines.push(l), broken)).toBe(1);
    expect(benchSimScale({ ...args, validate: false }, (l) => lines.push(l), broken)).toBe(0);
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r.validate, r.ok])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect(rows[0].failure).toMatch(/^scheduler: validateState failed after /);
  });

  it("checks its options", () => {
    const ok = { workers: "1, 4", perWorker: "5", workload: "map" };
    expect(simScaleOptions(ok)).toEqual({
      workers: [1, 4],
      perWorker: 5,
      workload: "map",
      validate: false,
    });
    expect(simScaleOptions({ ...ok, validate: true }).validate).toBe(true);
    expect(() => simScaleOptions({ ...ok, workers: "3,x" })).toThrow(
      "--workers must be a positive integer",
    );
    expect(() => simScaleOptions({ ...ok, perWorker: "0" })).toThrow(
      "--per-worker must be a positive integer",
    );
    expect(() => simScaleOptions({ ...ok, workload: "nope" })).toThrow(
      "--workload must be one of random, map, tree, shuffle, chain, mix, pinned, configured, got 'nope'",
    );
  });

  it("checks every size before running the first: one the simulator refuses is said at once", () => {
    const ok = { workers: "10,1000", perWorker: "1000", workload: "tree" };
    expect(simScaleOptions(ok).workers).toEqual([10, 1000]);
    expect(() => simScaleOptions({ ...ok, perWorker: "10000" })).toThrow(
      /^--workers 1000 --per-worker 10000: tasks: a tree workload of 5000000 builds about 10000000 tasks; at most 4000000 /,
    );
    expect(() => simScaleOptions({ ...ok, workers: "10,20000" })).toThrow(
      /^--workers 20000 --per-worker 1000: workers must be at most 10000, got 20000 /,
    );
  });

  it("rejects an unknown option through commander", async () => {
    await expect(main(["--nope"])).rejects.toThrow("unknown option '--nope'");
  });
});
