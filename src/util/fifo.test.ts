import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Fifo } from "./fifo.ts";

describe("Fifo", () => {
  it("gives items back oldest first, undefined once empty", () => {
    const q = new Fifo<number>();
    expect(q.shift()).toBeUndefined();
    q.push(1);
    q.push(2);
    expect(q.length).toBe(2);
    expect(q.shift()).toBe(1);
    q.push(3);
    expect([q.shift(), q.shift(), q.shift()]).toEqual([2, 3, undefined]);
    expect(q.length).toBe(0);
  });

  it("drain empties it, oldest first", () => {
    const q = new Fifo<string>();
    for (const c of "abcd") q.push(c);
    q.shift();
    expect(q.drain()).toEqual(["b", "c", "d"]);
    expect(q.length).toBe(0);
    expect(q.drain()).toEqual([]);
  });

  it("peeks, takes the oldest n as splice(0, n) would, keeps what a test is true of, iterates", () => {
    const q = new Fifo<number>();
    expect(q.peek()).toBeUndefined();
    for (let i = 0; i < 10; i++) q.push(i);
    q.shift();
    expect(q.peek()).toBe(1);
    expect(q.take(2.7)).toEqual([1, 2]);
    expect(q.take(-1)).toEqual([]);
    expect(q.take(Number.NaN)).toEqual([]);
    q.retain((v) => v % 2 === 1);
    expect([...q]).toEqual([3, 5, 7, 9]);
    expect(q.take(Number.POSITIVE_INFINITY)).toEqual([3, 5, 7, 9]);
    expect(q.length).toBe(0);
  });

  it("behaves as an array's push, shift and splice(0, n), across the cuts of its storage", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 40 }), (runs) => {
        const q = new Fifo<number>();
        const model: number[] = [];
        let next = 0;
        runs.forEach((count, i) => {
          for (let j = 0; j < count; j++) {
            if (i % 2 === 0) {
              q.push(next);
              model.push(next++);
            } else if (i % 4 === 1) {
              expect(q.shift()).toBe(model.shift());
            } else {
              expect(q.take(2)).toEqual(model.splice(0, 2));
            }
          }
          expect(q.length).toBe(model.length);
        });
        expect(q.drain()).toEqual(model);
      }),
      { numRuns: 50 },
    );
  });
});
