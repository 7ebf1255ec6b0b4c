import { describe, expect, it } from "vitest";
import { type PoolThreadView, ThreadPlacement } from "./threadPlacement.ts";

function thread(id: number, currentUsage: number, more: Partial<PoolThreadView> = {}) {
  return { id, currentUsage, terminating: false, destroyed: false, ...more };
}

describe("ThreadPlacement", () => {
  it("places a run on a thread that runs nothing, in the pool's order", () => {
    const p = new ThreadPlacement();
    const threads = [thread(1, 1), thread(2, 0), thread(3, 0)];
    expect(p.choose(7, threads)?.id).toBe(2);
    expect(p.threadOf(7)).toBe(2);
    expect(p.runsOn(2)).toBe(1);
  });

  it("with every thread busy, a run waits (null) until one's runs have all seceded", () => {
    const p = new ThreadPlacement();
    const t1 = thread(1, 0);
    const t2 = thread(2, 0);
    expect(p.choose(1, [t1, t2])?.id).toBe(1);
    t1.currentUsage = Number.POSITIVE_INFINITY; // piscina: one abortable job
    expect(p.choose(2, [t1, t2])?.id).toBe(2);
    t2.currentUsage = Number.POSITIVE_INFINITY;
    expect(p.choose(3, [t1, t2])).toBeNull();
    expect(p.threadOf(3)).toBeUndefined();
    p.seceded(2);
    expect(p.choose(3, [t1, t2])?.id).toBe(2);
    t2.currentUsage = 2;
    // thread 2 runs a task that has not seceded now: nothing is free
    expect(p.choose(4, [t1, t2])).toBeNull();
  });

  it("of the threads whose runs all seceded, picks the one with the fewest", () => {
    const p = new ThreadPlacement();
    const t1 = thread(1, 0);
    const t2 = thread(2, 0);
    p.choose(1, [t1, t2]);
    t1.currentUsage = 1;
    p.choose(2, [t1, t2]);
    t2.currentUsage = 1;
    p.seceded(1);
    p.seceded(2);
    expect(p.choose(3, [t1, t2])?.id).toBe(1);
    p.seceded(3);
    t1.currentUsage = 2;
    expect(p.choose(4, [t1, t2])?.id).toBe(2);
  });

  it("a rejoined run makes its thread busy again; a settled one frees it", () => {
    const p = new ThreadPlacement();
    const t1 = thread(1, 0);
    p.choose(1, [t1]);
    t1.currentUsage = 1;
    p.seceded(1);
    p.seceded(1); // twice: counted once
    expect(p.choose(2, [t1])?.id).toBe(1);
    t1.currentUsage = 2;
    p.seceded(2);
    p.rejoined(1);
    p.rejoined(1); // twice: counted once
    expect(p.choose(3, [t1])).toBeNull();
    p.settled(1);
    expect(p.runsOn(1)).toBe(1);
    expect(p.choose(3, [t1])?.id).toBe(1);
    p.settled(2);
    p.settled(3);
    p.settled(3); // twice: nothing more
    expect(p.runsOn(1)).toBe(0);
  });

  it("jobs that are not runs go only to a thread that runs nothing; none is remembered", () => {
    const p = new ThreadPlacement();
    const t1 = thread(1, 0);
    const t2 = thread(2, 0);
    p.choose(1, [t1, t2]);
    t1.currentUsage = 1;
    p.seceded(1);
    expect(p.choose(null, [t1, t2])?.id).toBe(2);
    t2.currentUsage = 1;
    expect(p.choose(null, [t1, t2])).toBeNull();
    expect(p.runsOn(2)).toBe(0);
  });

  it("skips threads that are ending", () => {
    const p = new ThreadPlacement();
    const threads = [thread(1, 0, { terminating: true }), thread(2, 0, { destroyed: true })];
    expect(p.choose(1, threads)).toBeNull();
    expect(p.choose(null, threads)).toBeNull();
  });
});
