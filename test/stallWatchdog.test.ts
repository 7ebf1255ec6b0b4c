import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { TestCase, TestModule } from "vitest/node";
import { type Stall, StallWatchdog } from "./stallWatchdog.ts";

const mod = (moduleId: string) => ({ moduleId }) as TestModule;
const testOf = (moduleId: string, fullName = "a test") =>
  ({ module: mod(moduleId), fullName }) as TestCase;

describe("StallWatchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("names the file that went quiet for the limit; files that move or finished are not named", () => {
    const seen: Stall[][] = [];
    const w = new StallWatchdog(60_000, { checkEveryMs: 1_000, onStall: (s) => seen.push([...s]) });
    w.onTestModuleStart(mod("a.test.ts"));
    w.onTestModuleStart(mod("b.test.ts"));
    w.onTestModuleStart(mod("done.test.ts"));
    w.onTestModuleEnd(mod("done.test.ts"));
    for (let s = 0; s < 59; s++) {
      vi.advanceTimersByTime(1_000);
      w.onTestCaseResult(testOf("b.test.ts"));
    }
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(seen).toEqual([[{ file: "a.test.ts", quietMs: 60_000, lastTest: null }]]);
    // Once: the run is being stopped.
    vi.advanceTimersByTime(120_000);
    expect(seen).toHaveLength(1);
  });

  it("a test starting counts as moving, and the end of the run stops the watch", () => {
    const seen: Stall[][] = [];
    const w = new StallWatchdog(10_000, { checkEveryMs: 1_000, onStall: (s) => seen.push([...s]) });
    w.onTestModuleStart(mod("a.test.ts"));
    vi.advanceTimersByTime(9_000);
    w.onTestCaseReady(testOf("a.test.ts"));
    vi.advanceTimersByTime(9_000);
    expect(seen).toEqual([]);
    w.onTestRunEnd();
    vi.advanceTimersByTime(60_000);
    expect(seen).toEqual([]);
  });

  it("names the test the stalled file started last", () => {
    const seen: Stall[][] = [];
    const w = new StallWatchdog(10_000, { checkEveryMs: 1_000, onStall: (s) => seen.push([...s]) });
    w.onTestModuleStart(mod("a.test.ts"));
    w.onTestCaseReady(testOf("a.test.ts", "suite > first"));
    w.onTestCaseResult(testOf("a.test.ts", "suite > first"));
    w.onTestCaseReady(testOf("a.test.ts", "suite > second"));
    vi.advanceTimersByTime(10_000);
    expect(seen).toEqual([[{ file: "a.test.ts", quietMs: 10_000, lastTest: "suite > second" }]]);
  });

  it("a test's event for a file already ended does not put the file under way again", () => {
    const seen: Stall[][] = [];
    const w = new StallWatchdog(10_000, { checkEveryMs: 1_000, onStall: (s) => seen.push([...s]) });
    w.onTestModuleStart(mod("done.test.ts"));
    w.onTestCaseReady(testOf("done.test.ts"));
    w.onTestModuleEnd(mod("done.test.ts"));
    // Reported after the file's end.
    w.onTestCaseResult(testOf("done.test.ts"));
    w.onTestCaseReady(testOf("done.test.ts", "late"));
    w.onTestModuleStart(mod("other.test.ts"));
    for (let s = 0; s < 30; s++) {
      vi.advanceTimersByTime(1_000);
      w.onTestCaseResult(testOf("other.test.ts"));
    }
    expect(seen).toEqual([]);
  });
});
