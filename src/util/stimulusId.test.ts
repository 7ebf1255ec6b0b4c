import { afterEach, describe, expect, it, vi } from "vitest";
import { newStimulusId } from "./stimulusId.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("newStimulusId", () => {
  it("is the prefix and the wall clock in seconds, read anew each millisecond", () => {
    vi.useFakeTimers();
    vi.setSystemTime(1_700_000_000_250);
    expect(newStimulusId("compute")).toBe("compute-1700000000.25");
    expect(newStimulusId("gather")).toBe("gather-1700000000.25");
    vi.setSystemTime(1_700_000_001_500);
    expect(newStimulusId("compute")).toBe("compute-1700000001.5");
  });
});
