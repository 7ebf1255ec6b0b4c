import { describe, expect, it } from "vitest";
import { fullGarbageCollection, ThrottledGc } from "./throttledGc.ts";

describe("ThrottledGc", () => {
  it("collects only while collections take at most the share of the time", () => {
    let now = 0;
    const slow: number[] = [];
    let cost = 100; // each collection takes 100 ms
    const gc = new ThrottledGc({
      collect: () => {
        now += cost;
      },
      now: () => now,
      onSlow: (ms) => slow.push(ms),
      slowMs: 150,
    });
    now = 10;
    expect(gc.collect()).toBe(true); // nothing collected before
    // 100 ms of collection needs 2 s since it began for a share of 5%.
    now = 1_000;
    expect(gc.collect()).toBe(false);
    now = 2_011;
    expect(gc.collect()).toBe(true);
    expect(gc.collections).toBe(2);
    cost = 200;
    now = 10_000;
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([200]);
    now = 13_000; // 200 ms needs 4 s
    expect(gc.collect()).toBe(false);
  });

  it("does not collect while the last collection took exactly the share, as Dask's", () => {
    let now = 0;
    const gc = new ThrottledGc({
      collect: () => {
        now += 100;
      },
      now: () => now,
    });
    expect(gc.collect()).toBe(true);
    now = 2_000; // 100 ms of 2 s: 5%
    expect(gc.collect()).toBe(false);
    now = 2_001;
    expect(gc.collect()).toBe(true);
  });

  it("counts a collection the clock did not see as taking a microsecond", () => {
    let now = 0;
    const gc = new ThrottledGc({ collect: () => {}, now: () => now });
    expect(gc.collect()).toBe(true);
    now = 0.01; // 1 µs of 10 µs
    expect(gc.collect()).toBe(false);
    now = 0.03;
    expect(gc.collect()).toBe(true);
  });

  it("tells of a slow collection only beyond slowMs", () => {
    let now = 0;
    let cost = 150;
    const slow: number[] = [];
    const gc = new ThrottledGc({
      collect: () => {
        now += cost;
      },
      now: () => now,
      onSlow: (ms) => slow.push(ms),
      slowMs: 150,
    });
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([]);
    cost = 151;
    now = 100_000;
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([151]);
  });

  it("runs V8's full collection, exposed if need be", () => {
    const gc = fullGarbageCollection();
    expect(gc).toBeTypeOf("function");
    expect(() => gc?.()).not.toThrow();
  });
});
