import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, expect, it } from "vitest";
import { sharedPath } from "../../replay/testPaths.ts";
import { runWeft } from "../testContext.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-replay-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("weft replay stops its progress bar, clearing the line, before it prints the report", async () => {
  // Long enough for a bar (PROGRESS_MIN_EVENTS).
  const lines = gunzipSync(readFileSync(sharedPath("bench", "tree.jsonl.gz")))
    .toString()
    .split("\n")
    .slice(0, 5001);
  const file = join(dir, "head.jsonl.gz");
  writeFileSync(file, gzipSync(lines.join("\n")));
  const r = await runWeft(["replay", file], true);
  expect(r.code).toBe(0);
  expect(r.err).toContain("events");
  expect(r.err.endsWith("\x1b[2K")).toBe(true);
});
