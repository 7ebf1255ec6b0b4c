import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { benchClusterAb, main } from "./clusterAb.ts";
import { checkoutFiles } from "./clusterAbSide.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));

describe("bench:cluster-ab", () => {
  it("pairs runs of two checkouts and reports the median ratio (here: this one against itself)", async () => {
    const records: Record<string, unknown>[] = [];
    await benchClusterAb(
      {
        base: ROOT,
        graphs: ["tree", "chain"],
        pairs: 2,
        // One round: a second would start the same two side processes again (some 6 s
        // of CPU); pairedRuns' rounds, each with sides started afresh, are checked by
        // bench/stateAb.test.ts (rounds: 2).
        rounds: 1,
        warmup: 1,
        saturation: Infinity,
        scale: 0.02,
      },
      (r) => records.push(r),
    );
    expect(records[0]).toMatchObject({
      bench: "cluster-ab",
      base: ROOT,
      this: ROOT,
      rounds: 1,
      pairsPerRound: 2,
    });
    expect(records.slice(1).map((r) => r.graph)).toEqual(["tree", "chain"]);
    for (const r of records.slice(1)) {
      expect(r.checked).toBe(true);
      expect(r.medianRatio).toBeGreaterThan(0);
      const [q1, q3] = r.ratioQuartiles as number[];
      expect(q1).toBeLessThanOrEqual(q3);
      expect(r.roundMedianRatios).toHaveLength(1);
    }
    // 164 leaves, then levels of 82, 41, 21 (one add(x, 0)), 11, 6, 3, 2 and 1 tasks.
    expect(records[1].tasks).toBe(331);
  });

  it("runs the tasks on the workers' pool threads with executor threads", async () => {
    const records: Record<string, unknown>[] = [];
    await benchClusterAb(
      {
        base: ROOT,
        graphs: ["chain"],
        pairs: 1,
        rounds: 1,
        warmup: 0,
        saturation: Infinity,
        scale: 0.01,
        executor: "threads",
      },
      (r) => records.push(r),
    );
    expect(records[0]).toMatchObject({ bench: "cluster-ab", executor: "threads" });
    expect(records[1]).toMatchObject({ graph: "chain", checked: true });
  });

  it("refuses a directory that is not a weft checkout, naming the missing file", async () => {
    const empty = mkdtempSync(join(tmpdir(), "weft-ab-"));
    onTestFinished(() => rmSync(empty, { recursive: true, force: true }));
    await expect(
      benchClusterAb(
        {
          base: empty,
          graphs: ["chain"],
          pairs: 1,
          rounds: 1,
          warmup: 0,
          saturation: Infinity,
          scale: 0.01,
        },
        () => {},
      ),
    ).rejects.toThrow(
      `${empty} is not a weft checkout: ${join(empty, "src/client/localCluster.ts")} is missing`,
    );
  });

  it("finds the graphs of a checkout older than weft bench in bench/", () => {
    const old = mkdtempSync(join(tmpdir(), "weft-old-checkout-"));
    onTestFinished(() => rmSync(old, { recursive: true, force: true }));
    mkdirSync(join(old, "bench"));
    writeFileSync(join(old, "bench/clusterGraphs.ts"), "");
    expect(checkoutFiles(old)).toMatchObject({
      graphs: join(old, "bench/clusterGraphs.ts"),
      tasks: join(old, "bench/clusterTasks.ts"),
    });
    expect(checkoutFiles(ROOT)).toMatchObject({
      graphs: join(ROOT, "src/bench/clusterGraphs.ts"),
    });
  });

  it("refuses bad options before starting anything", async () => {
    await expect(main(["--base", ROOT, "--graphs", "tree,nope"])).rejects.toThrow(
      'unknown graph "nope"',
    );
    await expect(main(["--base", ROOT, "--pairs", "0"])).rejects.toThrow(
      "--pairs must be a positive integer",
    );
    await expect(main(["--base", ROOT, "--executor", "piscina"])).rejects.toThrow(
      /--executor.*piscina.*inline, threads/,
    );
  });
});
