import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { parseStream } from "../src/bench/streamFile.ts";
import { ONE_TASK_FINAL, writeOneTaskStream } from "../src/bench/testStreams.ts";
import { readMaybeGzip } from "../src/protocol/conformance.ts";
import { eventFromDict } from "../src/protocol/daskJson/events.ts";
import { PauseEvent } from "../src/worker/state/events.ts";
import { leanReplay, main, portReplay } from "./leanIndependent.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-lean-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeOneTaskStream(dir, "one");
const path = join(dir, "one.jsonl.gz");
const stream = parseStream(readMaybeGzip(path), path, eventFromDict);

describe("the lean replay of independent", () => {
  it("ends as the port does: the stream's final line", () => {
    const zero = () => 0;
    for (const end of [leanReplay(stream, zero), portReplay(stream, zero)]) {
      expect(end).toMatchObject({
        instructions: ONE_TASK_FINAL.instructions,
        transition_counter: ONE_TASK_FINAL.transition_counter,
        tasks: ONE_TASK_FINAL.tasks,
      });
    }
  });

  it("refuses the events independent does not send", () => {
    const other = { ...stream, events: [new PauseEvent({ stimulusId: "p" })] };
    expect(() => leanReplay(other, () => 0)).toThrow(/only what independent sends, not PauseEvent/);
  });

  it("prints the paired ratio", async () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
      lines.push(String(s));
      return true;
    });
    try {
      expect(await main(["--stream", path, "--pairs", "2"])).toBe(0);
    } finally {
      write.mockRestore();
    }
    const result = JSON.parse(lines.join(""));
    expect(result).toMatchObject({ bench: "lean-independent", pairs: 2, clock: "zero" });
    expect(result.portOverLean).toBeGreaterThan(0);
  });
});
