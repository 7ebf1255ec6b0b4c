import { describe, expect, it } from "vitest";
import type { CpuProfile } from "./profiler.ts";
import { framePositions, withOriginalPositions } from "./sourceMappedProfile.ts";

const TS = "file:///tasks.ts";

/** root → main (tasks.ts, one line as tsx makes it) → spin (twice, under two callers) and V8's (program). */
function profile(): CpuProfile {
  const frame = (functionName: string, url: string, lineNumber: number, columnNumber: number) => ({
    functionName,
    scriptId: "7",
    url,
    lineNumber,
    columnNumber,
  });
  return {
    nodes: [
      { id: 1, callFrame: frame("(root)", "", -1, -1), children: [2, 5] },
      { id: 2, callFrame: frame("main", TS, 0, 40), children: [3, 4] },
      {
        id: 3,
        callFrame: frame("spin", TS, 0, 218),
        hitCount: 5,
        positionTicks: [{ line: 1, ticks: 5 }],
      },
      { id: 4, callFrame: frame("spin", TS, 0, 218), hitCount: 1 },
      { id: 5, callFrame: frame("(program)", "", -1, -1), hitCount: 2 },
      {
        id: 6,
        callFrame: frame("plain", "file:///plain.mjs", 9, 21),
        positionTicks: [{ line: 13, ticks: 4 }],
      },
    ],
    startTime: 0,
    endTime: 8_000,
    samples: [3, 3, 3, 3, 3, 4, 5, 5],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
}

describe("a profile's frames at their places in the source", () => {
  it("lists each position a source map might move once, V8's own entries left out", () => {
    expect(framePositions(profile())).toEqual([
      { url: TS, line: 0, column: 40 },
      { url: TS, line: 0, column: 218 },
      { url: "file:///plain.mjs", line: 9, column: 21 },
    ]);
  });

  it("moves each frame the map places, drops its line ticks, and leaves the rest as it was", () => {
    const p = profile();
    const positions = framePositions(p);
    const got = withOriginalPositions(p, positions, [null, { url: TS, line: 12, column: 9 }, null]);
    const spin = got.nodes.filter((n) => n.callFrame.functionName === "spin");
    expect(spin.map((n) => [n.id, n.callFrame.lineNumber, n.callFrame.columnNumber])).toEqual([
      [3, 12, 9],
      [4, 12, 9],
    ]);
    expect(spin[0]).not.toHaveProperty("positionTicks");
    expect(spin[0].hitCount).toBe(5);
    expect(spin[0].callFrame.scriptId).toBe("7");
    // Not moved: as they were, their line ticks kept.
    expect(got.nodes[1]).toBe(p.nodes[1]);
    expect(got.nodes[5]).toBe(p.nodes[5]);
    expect(got.samples).toEqual(p.samples);
    // The profile given is not changed.
    expect(p.nodes[2].callFrame.lineNumber).toBe(0);
    expect(p.nodes[2].positionTicks).toEqual([{ line: 1, ticks: 5 }]);
  });

  it("takes the source's URL from the map (tsx's: without the query weft imported it under)", () => {
    const p = profile();
    const q = { ...p, nodes: p.nodes.map((n) => ({ ...n, callFrame: { ...n.callFrame } })) };
    q.nodes[2].callFrame.url = `${TS}?weft-tsx=1`;
    const positions = framePositions(q);
    const originals = positions.map((pos) =>
      pos.url.endsWith("?weft-tsx=1") ? { url: TS, line: 12, column: 9 } : null,
    );
    expect(withOriginalPositions(q, positions, originals).nodes[2].callFrame.url).toBe(TS);
  });

  it("placing nothing gives the profile itself", () => {
    const p = profile();
    const positions = framePositions(p);
    expect(
      withOriginalPositions(
        p,
        positions,
        positions.map(() => null),
      ),
    ).toBe(p);
  });
});
