import { afterEach, describe, expect, it, vi } from "vitest";
import { CollectWhenIdle, fullGarbageCollection, ThrottledGc } from "./throttledGc.ts";

/**
 * A ThrottledGc on a fake clock (`clock.now`, ms) whose collections take `clock.cost`
 * ms, telling `slow` of those beyond 150 ms.
 */
function gcOnClock(cost: number) {
  const clock = { now: 0, cost };
  const slow: number[] = [];
  const gc = new ThrottledGc({
    collect: () => {
      clock.now += clock.cost;
    },
    now: () => clock.now,
    onSlow: (ms) => slow.push(ms),
    slowMs: 150,
  });
  return { gc, clock, slow };
}

describe("ThrottledGc", () => {
  it("collects only while collections take at most the share of the time", () => {
    const { gc, clock, slow } = gcOnClock(100); // each collection takes 100 ms
    clock.now = 10;
    expect(gc.collect()).toBe(true); // nothing collected before
    // 100 ms of collection needs 2 s since it began for a share of 5%.
    clock.now = 1_000;
    expect(gc.collect()).toBe(false);
    clock.now = 2_011;
    expect(gc.collect()).toBe(true);
    expect(gc.collections).toBe(2);
    clock.cost = 200;
    clock.now = 10_000;
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([200]);
    clock.now = 13_000; // 200 ms needs 4 s
    expect(gc.collect()).toBe(false);
  });

  it("does not collect while the last collection took exactly the share, as Dask's", () => {
    const { gc, clock } = gcOnClock(100);
    expect(gc.collect()).toBe(true);
    clock.now = 2_000; // 100 ms of 2 s: 5%
    expect(gc.collect()).toBe(false);
    clock.now = 2_001;
    expect(gc.collect()).toBe(true);
  });

  it("counts a collection the clock did not see as taking a microsecond", () => {
    const { gc, clock } = gcOnClock(0);
    expect(gc.collect()).toBe(true);
    clock.now = 0.01; // 1 µs of 10 µs
    expect(gc.collect()).toBe(false);
    clock.now = 0.03;
    expect(gc.collect()).toBe(true);
  });

  it("tells of a slow collection only beyond slowMs", () => {
    const { gc, clock, slow } = gcOnClock(150);
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([]);
    clock.cost = 151;
    clock.now = 100_000;
    expect(gc.collect()).toBe(true);
    expect(slow).toEqual([151]);
  });

  it("runs V8's full collection, exposed if need be", () => {
    const gc = fullGarbageCollection();
    expect(gc).toBeTypeOf("function");
    expect(() => gc?.()).not.toThrow();
  });
});

describe("CollectWhenIdle", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("collects once, the delay after the last call, when there is something to let go of", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let needed = true;
    let collections = 0;
    const idle = new CollectWhenIdle(
      () => needed,
      () => collections++,
      1_000,
    );
    idle.soon();
    vi.advanceTimersByTime(600);
    idle.soon(); // a later task ended: the delay starts again
    vi.advanceTimersByTime(600);
    expect(collections).toBe(0);
    vi.advanceTimersByTime(400);
    expect(collections).toBe(1);
    vi.advanceTimersByTime(5_000);
    expect(collections).toBe(1);
    needed = false;
    idle.soon();
    vi.advanceTimersByTime(1_000);
    expect(collections).toBe(1);
    needed = true;
    idle.soon();
    idle.cancel();
    vi.advanceTimersByTime(1_000);
    expect(collections).toBe(1);
  });
});
