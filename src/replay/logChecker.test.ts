import { describe, expect, it } from "vitest";
import { type CheckedStimulus, LogChecker } from "./logChecker.ts";
import { comparableRecord } from "./records.ts";

const r = (key: string) => comparableRecord([key, "put-in-memory", "s", 0]);

/** A stimulus whose replayed record `i` was written by event `10 + i`. */
function stimulus(
  expected: string[],
  replayed: string[],
  headless = false,
  stimulusId = "s",
): CheckedStimulus {
  return {
    stimulusId,
    expected: expected.map(r),
    replayed: replayed.map(r),
    eventAt: (i) => ({ index: 10 + i, cls: "ExecuteSuccessEvent" }),
    headless,
  };
}

describe("LogChecker", () => {
  it("counts the dumped records checked, not the replayed ones", () => {
    const checker = new LogChecker();
    checker.check(stimulus(["a", "b", "c"], ["a"]));
    checker.check(stimulus(["a"], ["a", "b", "c", "d"]));
    expect(checker.checkedStimuli).toBe(2);
    expect(checker.checkedRecords).toBe(4);
  });

  it("blames a replay that ran short on the event of its last record", () => {
    const found = new LogChecker().check(stimulus(["a", "b", "c"], ["a", "b"]));
    // Record 2 has no replayed counterpart: the event that wrote record 1 stopped there.
    expect(found).toMatchObject({ eventIndex: 11, recordIndex: 2, replayed: null });
    expect(found?.expected).toBe("('c', 'put-in-memory', 's')");
  });

  it("keeps the first divergence, reordering and unverifiable stimulus", () => {
    const checker = new LogChecker();
    checker.check(stimulus(["a", "b"], ["b", "a"], false, "first-reordered"));
    checker.check(stimulus(["a", "b"], ["b", "a"], false, "second-reordered"));
    checker.check(stimulus(["a"], ["b"], false, "first-divergent"));
    checker.check(stimulus(["a"], ["c"], false, "second-divergent"));
    checker.check(stimulus(["a"], ["b"], true, "first-unverifiable"));
    checker.check(stimulus(["a"], ["c"], true, "second-unverifiable"));
    expect(checker.firstReordering?.stimulusId).toBe("first-reordered");
    expect(checker.firstDivergence?.stimulusId).toBe("first-divergent");
    expect(checker.firstUnverifiable?.stimulusId).toBe("first-unverifiable");
    expect([checker.equal, checker.reordered, checker.divergent, checker.unverifiable]).toEqual([
      0, 2, 2, 2,
    ]);
  });

  it("reports how many records are on one side only", () => {
    const found = new LogChecker().check(stimulus(["a", "b", "c"], ["a", "d"]));
    expect(found).toMatchObject({ recordIndex: 1, missing: 2, extra: 1 });
  });
});
