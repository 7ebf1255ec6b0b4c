import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventToDict } from "../protocol/daskJson/events.ts";
import { ComputeTaskEvent } from "../worker/state/events.ts";
import { formatReport } from "./formatReport.ts";
import { replayFile } from "./replayFile.ts";
import { sharedPath, tempDir } from "./testPaths.ts";

const VECTOR =
  "suite/test_cancelled_state__test_abort_execution_add_as_dependency__e3415677__0.json.gz";

let dir: string;
let treeLines: string[];

beforeAll(() => {
  dir = tempDir("replay-streams");
  treeLines = gunzipSync(readFileSync(sharedPath("bench", "tree.jsonl.gz")))
    .toString("utf8")
    .trimEnd()
    .split("\n");
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("conformance vectors", () => {
  it("replays a vector as the conformance runner does", async () => {
    const { report } = await replayFile(sharedPath("conformance", VECTOR));
    expect(report.kind).toBe("vector");
    if (report.kind !== "vector") return;
    expect(report.ok).toBe(true);
    expect(report.mismatch).toBeNull();
    expect(report.steps).toBe(10);
    expect(report.transitionCounter).toBe(18);
    expect(formatReport(report)).toContain("PASSED");
  });

  it("reports the first step whose recorded state differs", async () => {
    const v = JSON.parse(gunzipSync(readFileSync(sharedPath("conformance", VECTOR))).toString());
    const last = v.steps[v.steps.length - 1];
    last.state.transition_counter += 1;
    const file = join(dir, "tampered.json");
    writeFileSync(file, JSON.stringify(v));
    const { report } = await replayFile(file);
    if (report.kind !== "vector") throw new Error("not a vector report");
    expect(report.ok).toBe(false);
    expect(report.mismatch?.step).toBe(v.steps.length - 1);
    expect(report.mismatch?.what).toBe("state");
    expect(report.mismatch?.details.join("\n")).toContain("transition_counter");
  });

  it("skips an order-sensitive vector, whatever its steps", async () => {
    const v = JSON.parse(gunzipSync(readFileSync(sharedPath("conformance", VECTOR))).toString());
    v.order_sensitive = true;
    v.steps[v.steps.length - 1].state.transition_counter += 1;
    const file = join(dir, "order-sensitive.json");
    writeFileSync(file, JSON.stringify(v));
    const { report } = await replayFile(file);
    if (report.kind !== "vector") throw new Error("not a vector report");
    expect(report).toMatchObject({ skipped: true, mismatch: null, ok: true });
    expect(formatReport(report)).toContain("SKIPPED: the vector is order-sensitive");
  });
});

describe("stimulus streams", () => {
  it("replays the first lines of a stream, with nothing to check", async () => {
    const file = join(dir, "tree-head.jsonl.gz");
    writeFileSync(file, gzipSync(`${treeLines.slice(0, 2001).join("\n")}\n`));
    const { report } = await replayFile(file);
    if (report.kind !== "stream") throw new Error("not a stream report");
    expect(report.name).toBe("tree");
    expect(report.events).toBe(2000);
    expect(report.final).toBeNull();
    expect(report.failure).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.transitionCounter).toBeGreaterThan(2000);
    expect(formatReport(report).split("\n").slice(-2)).toEqual([
      "  final     the stream has no final line (cut short?): nothing to check",
      "OK as far as checked: the machine took every event, nothing compared",
    ]);
  });

  it("refuses a stream holding only its header, which would pass having checked nothing", async () => {
    const file = join(dir, "tree-header.jsonl.gz");
    writeFileSync(file, gzipSync(`${treeLines[0]}\n`));
    await expect(replayFile(file)).rejects.toThrow(
      /tree-header\.jsonl\.gz: the stream has no event and no final line after its header: nothing to replay or check \(is it cut after line 1\?\)$/,
    );
  });

  it("replays a whole stream and matches its final line", async () => {
    const final = JSON.parse(treeLines[treeLines.length - 1]).final;
    const { report } = await replayFile(sharedPath("bench", "tree.jsonl.gz"));
    if (report.kind !== "stream") throw new Error("not a stream report");
    expect(report.final).toEqual({
      events: final.events,
      instructions: final.instructions,
      transitionCounter: final.transition_counter,
      tasks: final.tasks,
    });
    expect(report.finalMismatches).toEqual([]);
    expect(report.events).toBe(final.events);
    expect(report.transitionCounter).toBe(final.transition_counter);
    expect(report.ok).toBe(true);
  });

  it("reports a final line the replay does not match", async () => {
    const lines = treeLines.slice(0, 101);
    lines.push(
      JSON.stringify({ final: { events: 100, instructions: 0, transition_counter: 1, tasks: 0 } }),
    );
    const file = join(dir, "tree-wrong-final.jsonl");
    writeFileSync(file, lines.join("\n"));
    const { report } = await replayFile(file);
    if (report.kind !== "stream") throw new Error("not a stream report");
    expect(report.ok).toBe(false);
    expect(report.finalMismatches.some((m) => m.startsWith("transitionCounter: expected 1"))).toBe(
      true,
    );
  });

  it("hints at a cut file only when the last line is not JSON", async () => {
    const cut = join(dir, "tree-cut.jsonl");
    writeFileSync(cut, `${treeLines.slice(0, 10).join("\n")}\n${treeLines[10].slice(0, 20)}`);
    await expect(replayFile(cut)).rejects.toThrow(
      /line 11: not valid JSON \(is the file cut short\?\)/,
    );
    const middle = join(dir, "tree-bad-middle.jsonl");
    writeFileSync(middle, [...treeLines.slice(0, 5), "{", ...treeLines.slice(5, 10)].join("\n"));
    const err = await replayFile(middle).catch((e: unknown) => e);
    expect(String(err)).toMatch(/line 6: not valid JSON: /);
    expect(String(err)).not.toContain("cut short");
  });

  it("reports where the state machine raises, with the story", async () => {
    const header = treeLines[0];
    const events = [
      eventToDict(ComputeTaskEvent.dummy("x", { stimulusId: "c1", runId: 1 })),
      // y was never computed here: the seed asserts that a finished task is known.
      {
        cls: "ExecuteSuccessEvent",
        stimulus_id: "s1",
        key: "y",
        run_id: 1,
        value: null,
        start: 0,
        stop: 1,
        nbytes: 8,
        type: "int",
      },
    ];
    const file = join(dir, "raises.jsonl");
    // The reference's counts, which a replay that stopped early is not compared with.
    const final = { final: { events: 2, instructions: 0, transition_counter: 9, tasks: 1 } };
    writeFileSync(
      file,
      [header, ...events.map((e) => JSON.stringify(e)), JSON.stringify(final)].join("\n"),
    );
    const { report } = await replayFile(file);
    if (report.kind !== "stream") throw new Error("not a stream report");
    expect(report.ok).toBe(false);
    expect(report.finalMismatches).toEqual([]);
    expect(formatReport(report)).toContain("final     not compared: the replay stopped at event 1");
    expect(formatReport(report)).not.toContain("DIFFERENT");
    expect(report.failure?.eventIndex).toBe(1);
    expect(report.failure?.error).toBe("AssertionError");
    expect(formatReport(report)).toContain("error at event 1");
  });
});
