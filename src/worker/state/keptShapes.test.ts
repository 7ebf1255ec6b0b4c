import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("KEPT_SHAPES", () => {
  it("holds the V8 maps of the recommendations, instructions and tasks the hot path makes", () => {
    const check = fileURLToPath(new URL("./testKeptShapes.ts", import.meta.url));
    const child = spawnSync(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", check],
      { encoding: "utf8" },
    );
    expect(child.stderr).toBe("");
    const result = JSON.parse(child.stdout) as Record<string, boolean>;
    expect(Object.keys(result).sort()).toEqual([
      "AddKeysMsg",
      "Execute",
      "GatherDep",
      "Recs",
      "ReleaseWorkerDataMsg",
      "StealResponseMsg",
      "TaskErredMsg",
      "TaskFinishedMsg",
      "TaskState",
    ]);
    for (const [cls, kept] of Object.entries(result))
      expect({ cls, kept }).toEqual({ cls, kept: true });
  });
});
