import { describe, expect, it } from "vitest";
import { PauseReasons } from "./pauseReasons.ts";

describe("PauseReasons", () => {
  it("the memory monitor alone: pauses and resumes, telling the scheduler each time", () => {
    const p = new PauseReasons();
    expect(p.memory(false)).toEqual({ feed: null, tell: null });
    expect(p.memory(true)).toEqual({ feed: "pause", tell: "paused" });
    expect(p.memory(true)).toEqual({ feed: null, tell: null });
    expect(p.paused && p.pausedForMemory).toBe(true);
    expect(p.memory(false)).toEqual({ feed: "unpause", tell: "running" });
    expect(p.paused).toBe(false);
  });

  it("the scheduler alone: its pause and unpause go to the state machine, nothing back", () => {
    const p = new PauseReasons();
    expect(p.scheduler(true)).toEqual({ feed: "pause", tell: null });
    expect(p.paused && !p.pausedForMemory).toBe(true);
    expect(p.scheduler(false)).toEqual({ feed: "unpause", tell: null });
    expect(p.paused).toBe(false);
  });

  it("memory short while the scheduler holds the worker: tell it, resume only when both let go", () => {
    const p = new PauseReasons();
    p.scheduler(true);
    // Already paused: the state machine hears nothing new, the scheduler hears of memory.
    expect(p.memory(true)).toEqual({ feed: null, tell: "paused" });
    // The retirement failed: the scheduler lets go and takes the worker for running.
    expect(p.scheduler(false)).toEqual({ feed: null, tell: "paused" });
    expect(p.paused).toBe(true);
    expect(p.memory(false)).toEqual({ feed: "unpause", tell: "running" });
    expect(p.paused).toBe(false);
  });

  it("memory recovers while the scheduler still holds the worker: it stays paused, and says so", () => {
    const p = new PauseReasons();
    p.memory(true);
    expect(p.scheduler(true)).toEqual({ feed: "pause", tell: null });
    // The scheduler keeps it paused while retiring it, and resumes it if that fails.
    expect(p.memory(false)).toEqual({ feed: null, tell: "running" });
    expect(p.paused).toBe(true);
    expect(p.scheduler(false)).toEqual({ feed: "unpause", tell: null });
    expect(p.paused).toBe(false);
  });
});
