/**
 * The task functions of `npm run chaos:tcp` (a task module every `weft worker`
 * of the run loads): a shuffle of the integers 0..P·N-1 into P partitions,
 * then a chain reducing the partitions' sums (see `chaosGraph` in tcp.ts);
 * with `--dynamic`, tasks summing ranges that submit tasks (`rangeSum`); with
 * `--actors`, tasks reporting their blocks' sums to an actor (`Tally`).
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Actor } from "../../src/client/actor.ts";
import { workerClient } from "../../src/client/taskClient.ts";
import { defineTask } from "../../src/worker/taskRegistry.ts";

/** Block `i` of the integers: `i·n, …, i·n + n - 1`. */
export function makeBlock(i: number, n: number): number[] {
  return Array.from({ length: n }, (_, k) => i * n + k);
}

/** {@link makeBlock} as a task. */
export const make = defineTask("chaos.make", makeBlock);

/** The values `x` of `xs` with `x % p == j`. */
export const part = defineTask("chaos.part", (xs: readonly number[], j: number, p: number) =>
  xs.filter((x) => x % p === j),
);

/** The sum of every value of the pieces. */
export const merge = defineTask("chaos.merge", (...pieces: (readonly number[])[]) =>
  pieces.reduce((sum, xs) => xs.reduce((s, x) => s + x, sum), 0),
);

/**
 * `a + b`, after `ms` milliseconds: the chain of these is the serial part of a
 * round, the time a worker dying holds data the rest of the chain still needs.
 */
export const add = defineTask("chaos.add", async (a: number, b: number, ms: number) => {
  if (ms > 0) await sleep(ms);
  return a + b;
});

/**
 * Hold `mb` MiB (pages touched) for `ms` milliseconds, then let go of it: the
 * memory pressure of `--memory-pressure`, which pauses the worker it runs on
 * (as `client.run`, holding one of its threads meanwhile) until it is over.
 * It takes the memory 16 MiB at a time: on the inline executor, one long
 * allocation would block the worker past the scheduler's `--worker-ttl`.
 */
export const hog = defineTask("chaos.hog", async (mb: number, ms: number) => {
  const held: Buffer[] = [];
  for (let i = 0; i < mb; i++) {
    held.push(Buffer.alloc(1 << 20, 1));
    if (i % 16 === 15) await new Promise((resolve) => setImmediate(resolve));
  }
  await sleep(ms);
  return held.length;
});

/**
 * The sum of `lo, …, hi - 1`, each task splitting its range in two tasks of
 * its own (through its client, `--dynamic`) down to ranges of at most `leaf`,
 * each summed after `ms` milliseconds: a graph that grows as it runs, whose
 * waiting tasks a kill may take with their clients.
 */
export const rangeSum = defineTask(
  "chaos.rangeSum",
  async (lo: number, hi: number, leaf: number, ms: number): Promise<number> => {
    if (hi - lo <= leaf) {
      if (ms > 0) await sleep(ms);
      let sum = 0;
      for (let x = lo; x < hi; x++) sum += x;
      return sum;
    }
    const mid = Math.floor((lo + hi) / 2);
    return workerClient(async (client) => {
      const halves = [
        client.submit(rangeSum, lo, mid, leaf, ms),
        client.submit(rangeSum, mid, hi, leaf, ms),
      ];
      const [a, b] = await client.gather(halves);
      return a + b;
    });
  },
);

/**
 * The actor of an `--actors` round: the sums of the blocks reported to it, by
 * block, so that a task run again after its worker died reports the same
 * block again without counting it twice.
 */
export class Tally {
  private readonly sums = new Map<number, number>();
  /** Record block `i`'s sum; the blocks recorded so far. */
  add(i: number, sum: number): number {
    this.sums.set(i, sum);
    return this.sums.size;
  }
  /** The sum of the blocks recorded. */
  total(): number {
    let t = 0;
    for (const s of this.sums.values()) t += s;
    return t;
  }
}

/** Makes a {@link Tally}: submitted with `{ actor: true }`. */
export const tally = defineTask("chaos.tally", () => new Tally());

/** Sum block `i` of `n` integers after `ms` milliseconds, and report it to the tally `t`. */
export const tallyBlock = defineTask(
  "chaos.tallyBlock",
  async (t: Actor<Tally>, i: number, n: number, ms: number): Promise<number> => {
    if (ms > 0) await sleep(ms);
    const sum = makeBlock(i, n).reduce((a, b) => a + b, 0);
    return t.call("add", i, sum);
  },
);
