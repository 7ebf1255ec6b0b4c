import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RemovableFifo, type Slot } from "./removableFifo.ts";

describe("RemovableFifo", () => {
  it("behaves as an array spliced and shifted, across the rebuilds of its slots; a slot leaves once", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.nat(5000)), { maxLength: 4000 }),
        (ops) => {
          const q = new RemovableFifo<number>();
          const model: number[] = [];
          const slots: Slot<number>[] = [];
          let next = 0;
          for (const [op, n] of ops) {
            if (op === 0) {
              slots.push(q.push(next));
              model.push(next++);
            } else if (op === 1) {
              expect(q.shift()).toBe(model.shift());
            } else if (slots.length > 0) {
              // Any slot, gone already or not: removing it again changes nothing.
              const slot = slots[n % slots.length];
              const i = model.indexOf(slot.value);
              if (i >= 0) model.splice(i, 1);
              q.remove(slot);
            }
            expect(q.peek()).toBe(model[0]);
            expect(q.length).toBe(model.length);
          }
          expect([...q]).toEqual(model);
          q.retain((v) => v % 2 === 0);
          expect([...q]).toEqual(model.filter((v) => v % 2 === 0));
          q.clear();
          expect([q.length, q.peek()]).toEqual([0, undefined]);
        },
      ),
      { numRuns: 30 },
    );
  });
});
