import { describe, expect, it } from "vitest";
import { benchSoak, main, secondHalfSlope } from "./soak.ts";

describe("bench:soak", () => {
  it("runs graph after graph with clients coming and going, and measures the heap", async () => {
    const records: Record<string, unknown>[] = [];
    const { points, slope } = await benchSoak(
      { rounds: 12, every: 4, clientEvery: 5, protocol: "inproc", prefixes: "varying" },
      (r) => records.push(r),
    );
    expect(points.map((p) => p.round)).toEqual([4, 8, 12]);
    for (const p of points) expect(p.heapBytes).toBeGreaterThan(0);
    expect(records.filter((r) => "round" in r).map((r) => r.schedulerTasks)).toEqual([0, 0, 0]);
    expect(records.at(-1)).toMatchObject({ summary: "soak", rounds: 12 });
    expect(typeof slope).toBe("number");
  });

  it("fits the slope of the second half only", () => {
    const points = [0, 1, 2, 3].map((i) => ({
      round: (i + 1) * 10,
      // Steep while the logs fill, then 5 bytes a round.
      heapBytes: i < 2 ? i * 1e6 : 1e6 + (i - 1) * 50,
    }));
    expect(secondHalfSlope(points, 40)).toBeCloseTo(5);
    expect(secondHalfSlope(points.slice(0, 2), 40)).toBeNull();
  });

  it("refuses bad options", async () => {
    await expect(main(["--protocol", "udp"])).rejects.toThrow("--protocol must be inproc or tcp");
    await expect(main(["--prefixes", "some"])).rejects.toThrow("--prefixes must be stable");
    await expect(main(["--rounds", "0"])).rejects.toThrow("--rounds must be a positive integer");
  });
});
