import { describe, expect, it } from "vitest";
import { Queues } from "./queues.ts";
import type { Reply } from "./waiters.ts";

/** A reply counting the answers and keeping the last. */
function counted(): { reply: Reply; answers: () => number; last: () => unknown } {
  let answers = 0;
  let last: unknown = null;
  return {
    reply: (_c, _id, r) => {
      answers++;
      last = r;
      return true;
    },
    answers: () => answers,
    last: () => last,
  };
}

// With arrays shifted at each get (V8 moves every element of a long array left),
// the scheduler took 5 s to hand 300,000 items to gets (20 s for 600,000), 41 s
// with the getters waiting first, and 12 s to take them three at a time; with head
// indices, 0.7 s for the three, and 2.4 s for the second alone beside 8 busy loops
// on 2 cores. Each bound is at most half what the quadratic took on a quiet host.
describe("a queue at scale", () => {
  const n = 300_000;

  it("hands 600,000 items to gets one by one in linear time, in order", () => {
    const many = 2 * n;
    const q = new Queues(counted().reply);
    for (let i = 0; i < many; i++) q.put("a", i, "Q", 0, i, null, null);
    let last = -1;
    for (let i = 0; i < many; i++) {
      const got = q.get("b", i, "Q", 0, null) as { value: number };
      if (got.value !== last + 1) throw new Error(`got ${got.value} after ${last}`);
      last = got.value;
    }
    expect(last).toBe(many - 1);
    expect(q.size("Q")).toBe(0);
  }, 10_000);

  it("hands 300,000 puts to as many waiting gets in linear time, in order", () => {
    const { reply, answers, last } = counted();
    const q = new Queues(reply);
    for (let i = 0; i < n; i++) q.get("b", i, "Q", 0, null);
    for (let i = 0; i < n; i++) q.put("a", i, "Q", 0, i, null, null);
    expect(answers()).toBe(n);
    expect(last()).toEqual({ value: n - 1 });
  }, 15_000);

  it("takes batches of a long queue in linear time", () => {
    const q = new Queues(counted().reply);
    for (let i = 0; i < n; i++) q.put("a", i, "Q", 0, i, null, null);
    let taken = 0;
    for (let i = 0; i < n / 3; i++) {
      const batch = q.getBatch("b", "Q", 0, 3) as number[];
      if (batch[0] !== taken) throw new Error(`batch starts at ${batch[0]}, not ${taken}`);
      taken += batch.length;
    }
    expect(taken).toBe(n);
  }, 6_000);
});
