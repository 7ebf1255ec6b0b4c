import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HeapSet } from "../../util/heapSet.ts";
import { comparePriority, type Priority } from "../../util/priority.ts";
import { GatherCandidates } from "./gatherCandidates.ts";
import type { TaskState } from "./taskState.ts";

interface Entry {
  priority: Priority;
  isRemote: boolean;
  ntasksNeg: number;
  rnd: number;
  worker: string;
}

/** Python's sorted() of the seed's tuples (priority, is_remote, -ntasks, rnd, worker). */
function pythonOrder(a: Entry, b: Entry): number {
  return (
    comparePriority(a.priority, b.priority) ||
    Number(a.isRemote) - Number(b.isRemote) ||
    a.ntasksNeg - b.ntasksNeg ||
    a.rnd - b.rnd ||
    (a.worker < b.worker ? -1 : a.worker > b.worker ? 1 : 0)
  );
}

const entries = fc.uniqueArray(
  fc.record({
    // Few distinct values, so that ties reach the later tuple elements.
    priority: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 3 }),
    isRemote: fc.boolean(),
    ntasksNeg: fc.integer({ min: -3, max: -1 }),
    rnd: fc.constantFrom(0.25, 0.5, 0.75),
    worker: fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `tcp://10.0.0.${i}:1`)),
  }),
  { selector: (e) => e.worker, maxLength: 40 },
);

function tasks(): HeapSet<TaskState> {
  return new HeapSet<TaskState>((ts) => ts.priority as Priority);
}

function fill(q: GatherCandidates, es: readonly Entry[]): Map<string, HeapSet<TaskState>> {
  const sets = new Map<string, HeapSet<TaskState>>();
  for (const e of es) {
    const t = tasks();
    sets.set(e.worker, t);
    q.add(e.priority, e.isRemote, e.ntasksNeg, e.rnd, e.worker, t);
  }
  q.heapify();
  return sets;
}

describe("GatherCandidates", () => {
  it("pops in the order of Python's heapq over the seed's tuples, also when its entries are reused", () => {
    const q = new GatherCandidates();
    fc.assert(
      fc.property(fc.array(entries, { minLength: 1, maxLength: 4 }), (rounds) => {
        for (const es of rounds) {
          const sets = fill(q, es);
          const popped: string[] = [];
          while (q.size > 0) {
            const c = q.pop();
            expect(c.tasks).toBe(sets.get(c.worker));
            popped.push(c.worker);
          }
          expect(popped).toEqual([...es].sort(pythonOrder).map((e) => e.worker));
          q.clear();
        }
      }),
    );
  });

  it("puts a popped entry back where its updated fields order it", () => {
    fc.assert(
      fc.property(entries, fc.integer({ min: -5, max: -1 }), (es, ntasksNeg) => {
        fc.pre(es.length > 0);
        const q = new GatherCandidates();
        fill(q, es);
        const first = q.pop();
        first.ntasksNeg = ntasksNeg;
        const expected = es.map((e) => (e.worker === first.worker ? { ...e, ntasksNeg } : e));
        q.push(first);
        const popped: string[] = [];
        while (q.size > 0) popped.push(q.pop().worker);
        expect(popped).toEqual(expected.sort(pythonOrder).map((e) => e.worker));
      }),
    );
  });

  it("clear() empties the heap and drops the references to the peers' task sets", () => {
    const q = new GatherCandidates();
    const sets = fill(q, [
      { priority: [1], isRemote: false, ntasksNeg: -1, rnd: 0.5, worker: "a" },
      { priority: [0], isRemote: true, ntasksNeg: -2, rnd: 0.1, worker: "b" },
    ]);
    const top = q.pop();
    expect(top.worker).toBe("b");
    q.clear();
    expect(q.size).toBe(0);
    // The pooled entry handed out last no longer holds the peer's set.
    expect(top.tasks).not.toBe(sets.get("b"));
    expect(top.tasks.size).toBe(0);
  });
});
