import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedDeque } from "./boundedDeque.ts";

describe("BoundedDeque", () => {
  it("keeps the newest maxlen items, oldest first", () => {
    const d = new BoundedDeque<number>(3);
    expect(d.maxlen).toBe(3);
    expect(d.length).toBe(0);
    expect(d.toArray()).toEqual([]);
    for (let i = 1; i <= 5; i++) d.push(i);
    expect(d.length).toBe(3);
    expect(d.toArray()).toEqual([3, 4, 5]);
    expect([...d]).toEqual([3, 4, 5]);
  });

  it("at() indexes from the oldest, negatives from the newest", () => {
    const d = new BoundedDeque<string>(4);
    for (const c of "abcdef") d.push(c);
    expect([d.at(0), d.at(1), d.at(3), d.at(-1), d.at(-4)]).toEqual(["c", "d", "f", "f", "c"]);
    expect(d.at(4)).toBeUndefined();
    expect(d.at(-5)).toBeUndefined();
    expect(d.at(Number.NaN)).toBeUndefined();
  });

  it("maxlen 0 keeps nothing; Infinity is unbounded", () => {
    const z = new BoundedDeque<number>(0);
    z.push(1);
    expect(z.length).toBe(0);
    const u = new BoundedDeque<number>(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 1000; i++) u.push(i);
    expect(u.length).toBe(1000);
    expect(u.at(0)).toBe(0);
  });

  it("rejects invalid maxlen", () => {
    expect(() => new BoundedDeque(-1)).toThrow(RangeError);
    expect(() => new BoundedDeque(1.5)).toThrow(RangeError);
    expect(() => new BoundedDeque(Number.NaN)).toThrow(RangeError);
  });

  it("clear() empties and the deque is reusable", () => {
    const d = new BoundedDeque<number>(2);
    d.push(1);
    d.push(2);
    d.push(3);
    d.clear();
    expect(d.length).toBe(0);
    expect([...d]).toEqual([]);
    d.push(4);
    expect(d.toArray()).toEqual([4]);
  });

  it("does not preallocate maxlen slots", () => {
    const d = new BoundedDeque<number>(100_000);
    const storage = () => (d as unknown as { buf: unknown[] }).buf.length;
    expect(storage()).toBe(0);
    d.push(1);
    expect(storage()).toBeLessThanOrEqual(16);
    for (let i = 0; i < 100; i++) d.push(i);
    expect(storage()).toBeLessThanOrEqual(256);
  });

  it("behaves like Python deque(maxlen=n) (model check)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.oneof(fc.integer(), fc.constant("clear" as const)), { maxLength: 200 }),
        (maxlen, ops) => {
          const d = new BoundedDeque<number>(maxlen);
          let model: number[] = [];
          for (const op of ops) {
            if (op === "clear") {
              d.clear();
              model = [];
            } else {
              d.push(op);
              model.push(op);
              if (model.length > maxlen) model.shift();
            }
            expect(d.length).toBe(model.length);
          }
          expect(d.toArray()).toEqual(model);
          expect([...d]).toEqual(model);
          for (let i = -model.length - 1; i <= model.length; i++) expect(d.at(i)).toBe(model.at(i));
        },
      ),
    );
  });
});
