import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseVector, replayVector } from "./conformance.ts";

const VECTOR = new URL("../../test/vectors/oracle/scenario-resources.json.gz", import.meta.url);

function tampered() {
  const d = JSON.parse(gunzipSync(readFileSync(VECTOR)).toString("utf8"));
  d.steps[2].state.transition_counter = 999;
  return parseVector(JSON.stringify(d), "tampered");
}

describe("replayVector options", () => {
  it("beforeStep sees every step's stimulus before it is handled", () => {
    const v = parseVector(gunzipSync(readFileSync(VECTOR)).toString("utf8"), "vector");
    const seen: [number, string, number][] = [];
    const mismatch = replayVector(v, {
      beforeStep: (ws, ev, i) => seen.push([i, ev.stimulusId, ws.transitionCounter]),
    });
    expect(mismatch).toBeNull();
    expect(seen.map((s) => s[0])).toEqual(v.steps.map((_, i) => i));
    expect(seen.map((s) => s[1])).toEqual(v.steps.map((s) => s.event.stimulus_id));
    // Before the first stimulus, nothing has happened yet.
    expect(seen[0][2]).toBe(0);
  });

  it("compare: false replays to the end without comparing", () => {
    expect(replayVector(tampered())?.step).toBe(2);
    let steps = 0;
    const v = tampered();
    expect(replayVector(v, { compare: false, beforeStep: () => steps++ })).toBeNull();
    expect(steps).toBe(v.steps.length);
  });
});
