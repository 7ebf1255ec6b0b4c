import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coverageOf } from "./coverage.ts";

describe("coverageOf", () => {
  it("counts the stimuli of every vector under a directory and reports unreadable files", () => {
    const dir = "test/vectors/oracle";
    const c = coverageOf([dir]);
    expect(c.vectors).toBe(readdirSync(dir).length);
    expect(c.unreadable).toEqual([]);
    expect(c.diverged).toEqual([]);
    expect(c.combinations.get("ComputeTaskEvent @ absent")).toBeGreaterThan(0);
    expect(
      c.combinations.get("transition released -> waiting => waiting (ComputeTaskEvent)"),
    ).toBeGreaterThan(0);
    expect(
      c.combinations.get("transition released -> forgotten => forgotten (FreeKeysEvent)"),
    ).toBeGreaterThan(0);

    const tmp = mkdtempSync(join(tmpdir(), "weft-coverage-"));
    writeFileSync(join(tmp, "broken.json"), "{");
    let broken: ReturnType<typeof coverageOf>;
    try {
      broken = coverageOf([tmp]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    expect(broken.vectors).toBe(0);
    expect(broken.unreadable).toHaveLength(1);
    expect(broken.unreadable[0]).toContain("broken.json");
  });
});
