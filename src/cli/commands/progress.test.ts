import { describe, expect, it } from "vitest";
import { testContext } from "../testContext.ts";
import { PROGRESS_MIN_EVENTS, progressBar } from "./progress.ts";

/** What cli-progress writes to clear the bar's line as it stops (clearOnComplete). */
const CLEAR_LINE = "\x1b[2K";

describe("progressBar", () => {
  it("draws nothing when stderr is no terminal", () => {
    const ctx = testContext(false);
    const p = progressBar(ctx, "replay");
    p.update(0, 10 * PROGRESS_MIN_EVENTS);
    p.update(5 * PROGRESS_MIN_EVENTS, 10 * PROGRESS_MIN_EVENTS);
    p.stop();
    expect(ctx.stderr.text).toBe("");
  });

  it("draws nothing for less work than minTotal, or before afterMs", () => {
    const ctx = testContext(true);
    const small = progressBar(ctx, "replay");
    small.update(0, PROGRESS_MIN_EVENTS - 1);
    small.stop();
    const late = progressBar(ctx, "sim", { afterMs: 3_600_000 });
    late.update(0, 10 * PROGRESS_MIN_EVENTS);
    late.stop();
    expect(ctx.stderr.text).toBe("");
  });

  it("by default, draws for a replay of 2,000 events, as docs/replay.md says, and not of 1,999", () => {
    const ctx = testContext(true);
    const below = progressBar(ctx, "replay");
    below.update(0, 1_999);
    below.stop();
    expect(ctx.stderr.text).toBe("");
    const at = progressBar(ctx, "replay");
    at.update(0, 2_000);
    at.stop();
    expect(ctx.stderr.text).toContain("0/2000 events");
  });

  it("draws the label, the counts and the unit from minTotal on, and clears its line as it stops", () => {
    const ctx = testContext(true);
    const p = progressBar(ctx, "sim", { unit: "runs", minTotal: 4 });
    p.update(1, 4);
    p.update(2, 4);
    expect(ctx.stderr.text).toContain("sim [");
    // Drawn as it starts; redraws are throttled.
    expect(ctx.stderr.text).toContain("1/4 runs");
    expect(ctx.stderr.text.endsWith(CLEAR_LINE)).toBe(false);
    p.stop();
    expect(ctx.stderr.text.endsWith(CLEAR_LINE)).toBe(true);
    const drawn = ctx.stderr.text;
    p.stop();
    expect(ctx.stderr.text).toBe(drawn);
  });
});
