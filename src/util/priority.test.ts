import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { comparePriority } from "./priority.ts";

describe("comparePriority", () => {
  it("orders like Python tuples", () => {
    expect(comparePriority([1, 2], [1, 3])).toBe(-1);
    expect(comparePriority([1, 3], [1, 2])).toBe(1);
    expect(comparePriority([1, 2], [1, 2])).toBe(0);
    expect(comparePriority([], [])).toBe(0);
    expect(comparePriority([2], [1, 9, 9])).toBe(1);
    expect(comparePriority([-1, 5], [0])).toBe(-1);
  });

  it("sorts a shorter prefix first", () => {
    expect(comparePriority([1], [1, 0])).toBe(-1);
    expect(comparePriority([1, 0], [1])).toBe(1);
    expect(comparePriority([], [0])).toBe(-1);
    expect(comparePriority([0], [])).toBe(1);
  });

  it("treats -0 and 0 as equal, like Python floats", () => {
    expect(comparePriority([-0], [0])).toBe(0);
  });

  it("is an antisymmetric total order matching a string encoding", () => {
    const prio = fc.array(fc.integer({ min: -3, max: 3 }), { maxLength: 4 });
    fc.assert(
      fc.property(prio, prio, prio, (a, b, c) => {
        expect(comparePriority(a, b)).toBe(-comparePriority(b, a) || 0);
        if (comparePriority(a, b) <= 0 && comparePriority(b, c) <= 0) {
          expect(comparePriority(a, c)).toBeLessThanOrEqual(0);
        }
        expect(comparePriority(a, b) === 0).toBe(
          a.length === b.length && a.every((x, i) => x === b[i]),
        );
      }),
    );
  });

  it("agrees with lexicographic order on a sorted sample computed in Python", () => {
    // sorted([(1,), (0, 5), (0,), (), (1, -1), (0, 5, 0), (-1, 9)]) in Python
    const input = [[1], [0, 5], [0], [], [1, -1], [0, 5, 0], [-1, 9]];
    const expected = [[], [-1, 9], [0], [0, 5], [0, 5, 0], [1], [1, -1]];
    expect([...input].sort(comparePriority)).toEqual(expected);
  });
});
