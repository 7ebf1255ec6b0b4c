import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdQueue } from "./idQueue.ts";

describe("IdQueue", () => {
  it("keeps ids in order; any may leave; one leaving and coming back goes last", () => {
    const q = new IdQueue();
    expect(q.first()).toBeUndefined();
    for (const id of ["a", "b", "c", "d"]) q.push(id);
    q.remove("b");
    q.remove("zz");
    expect([q.length, q.first(), q.toArray()]).toEqual([3, "a", ["a", "c", "d"]]);
    q.remove("a");
    q.push("a");
    expect([q.first(), q.toArray()]).toEqual(["c", ["c", "d", "a"]]);
  });

  it("behaves as an array of distinct ids spliced, across the rebuilds of its order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3000 })), { maxLength: 3000 }),
        (ops) => {
          const q = new IdQueue();
          const model: string[] = [];
          for (const [add, n] of ops) {
            const id = `i${n}`;
            if (add && !model.includes(id)) {
              q.push(id);
              model.push(id);
            } else if (!add) {
              // Mostly the head, as a lock's queue loses it.
              const gone = n % 4 === 0 ? id : (model[0] ?? id);
              const i = model.indexOf(gone);
              if (i >= 0) model.splice(i, 1);
              q.remove(gone);
            }
            expect(q.first()).toBe(model[0]);
            expect(q.length).toBe(model.length);
          }
          expect(q.toArray()).toEqual(model);
        },
      ),
      { numRuns: 30 },
    );
  });
});
