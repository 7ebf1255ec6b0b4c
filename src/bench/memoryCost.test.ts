import { describe, expect, it } from "vitest";
import { freshPageMicros, minorFaults, systemCpuSeconds } from "./memoryCost.ts";

describe("memory cost probe", () => {
  it.runIf(process.platform === "linux")("times the faults of touching fresh pages", () => {
    const before = minorFaults();
    const micros = freshPageMicros(4 * 1024 * 1024);
    // A fresh 4 MiB mapping faults page by page (fewer faults with huge pages).
    expect(minorFaults() - before).toBeGreaterThan(0);
    expect(micros).toBeGreaterThan(0);
    expect(Number.isFinite(micros)).toBe(true);
  });

  it("reads the system CPU time as a non-decreasing number of seconds", () => {
    const a = systemCpuSeconds();
    expect(systemCpuSeconds()).toBeGreaterThanOrEqual(a);
    // The same kernel counter as process.cpuUsage() (in µs): seconds, not ms. The bound is
    // no timing: the two reads are microseconds apart, and ms would be 1000 times larger.
    expect(Math.abs(systemCpuSeconds() - process.cpuUsage().system / 1e6)).toBeLessThan(1);
  });
});
