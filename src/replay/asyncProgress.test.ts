import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { replayFile } from "./replayFile.ts";
import { sharedPath, tempDir } from "./testPaths.ts";

/** The process warnings emitted while `run` runs and a turn after. */
async function warningsOf(run: () => Promise<unknown>): Promise<Error[]> {
  const seen: Error[] = [];
  const onWarning = (w: Error) => seen.push(w);
  process.on("warning", onWarning);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off("warning", onWarning);
  }
  return seen;
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

describe("an async onProgress that rejects", () => {
  afterEach(() => {
    process.off("unhandledRejection", onUnhandled);
  });

  it("is a process warning, once a replay, rather than an unhandled rejection ending the process", async () => {
    process.on("unhandledRejection", onUnhandled);
    const dir = tempDir("progress");
    const stream = join(dir, "cut.jsonl");
    const lines = gunzipSync(readFileSync(sharedPath("bench", "tree.jsonl.gz")))
      .toString("utf8")
      .split("\n");
    writeFileSync(stream, `${lines.slice(0, 300).join("\n")}\n`);
    for (const [file, who] of [
      [sharedPath("dumps", "errors-and-cancel.msgpack.gz"), "replayDump"],
      [stream, "replayStreamFile"],
    ] as const) {
      let calls = 0;
      const warnings = await warningsOf(async () => {
        const { report } = await replayFile(file, {
          onProgress: async () => {
            calls++;
            throw new Error("the progress bar is gone");
          },
        });
        expect(report.ok).toBe(true);
      });
      expect(calls).toBeGreaterThan(1);
      expect(warnings.map((w) => [w.name, w.message])).toEqual([
        ["WeftCallbackWarning", `${who}: onProgress failed: Error: the progress bar is gone`],
      ]);
    }
    rmSync(dir, { recursive: true, force: true });
    expect(unhandled).toEqual([]);
  });
});
