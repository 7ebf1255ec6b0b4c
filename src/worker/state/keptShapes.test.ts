import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("KEPT_SHAPES", () => {
  it("holds the V8 maps of the recommendations, instructions and tasks the hot path makes", () => {
    const check = fileURLToPath(new URL("./testKeptShapes.ts", import.meta.url));
    // %HaveSameMap is a V8 internal: a Node.js upgrade may rename or drop it, and then
    // this check needs another way to compare maps (the child's stderr says so).
    const child = spawnSync(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", check],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const result = JSON.parse(child.stdout) as Record<string, boolean>;
    expect(Object.keys(result).sort()).toEqual([
      "AddKeysMsg",
      "Execute",
      "GatherDep",
      "LongRunningMsg",
      "Recs",
      "ReleaseWorkerDataMsg",
      "RequestRefreshWhoHasMsg",
      "RescheduleMsg",
      "RetryBusyWorkerLater",
      "StealResponseMsg",
      "TaskErredMsg",
      "TaskFinishedMsg",
      "TaskState",
    ]);
    for (const [cls, kept] of Object.entries(result))
      expect({ cls, kept }).toEqual({ cls, kept: true });
  });
});
