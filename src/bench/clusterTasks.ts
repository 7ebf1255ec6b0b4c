/** The task functions of the cluster benchmarks (a task module every worker loads). */

import { setTimeout as sleep } from "node:timers/promises";
import { workerClient } from "../client/taskClient.ts";
import { defineTask } from "../worker/taskRegistry.ts";

/** This module's URL, for a cluster's `taskModules` (its sources in a checkout, else the build). */
export const CLUSTER_TASKS: string = import.meta.url;

/** `x + 1`. */
export const inc = defineTask("inc", (x: number) => x + 1);
/** `x + 1` after `ms` milliseconds: a task that takes time without using the CPU (bench:cluster's `skew`). */
export const nap = defineTask("nap", async (x: number, ms: number) => {
  await sleep(ms);
  return x + 1;
});
/** `a + b`. */
export const add = defineTask("add", (a: number, b: number) => a + b);
/** The ints `start, start + 1, …, start + n - 1`. */
export const load = defineTask("load", (start: number, n: number) =>
  Array.from({ length: n }, (_, i) => start + i),
);
/** The values `v` of `part` with `v % n == j`. */
export const split = defineTask("split", (part: readonly number[], n: number, j: number) =>
  part.filter((v) => v % n === j),
);
/** The pieces, concatenated. */
export const concat = defineTask("concat", (pieces: readonly (readonly number[])[]) =>
  pieces.flat(),
);
/** The number of elements of `a` (a large argument's round trip, bench:large-args). */
export const len = defineTask("len", (a: Float64Array) => a.length);
/** `n` float64 zeros (a large result, bench:large-args). */
export const zeros = defineTask("zeros", (n: number) => new Float64Array(n));
/**
 * A task that submits tasks (bench:cluster's `spawn` graph): below `depth` 0 it
 * submits its two children, keyed `<key>-0` and `<key>-1`, through its client,
 * waits for them (seceded, as `workerClient` does), releases them and returns
 * their sum; a leaf returns 1.
 */
export const spawnTree = defineTask(
  "spawnTree",
  async (key: string, depth: number): Promise<number> => {
    if (depth === 0) return 1;
    return workerClient(async (client) => {
      const children = [0, 1].map((i) =>
        client.submitWith({ key: `${key}-${i}`, pure: false }, spawnTree, `${key}-${i}`, depth - 1),
      );
      try {
        const [a, b] = await client.gather(children);
        return (a as number) + (b as number);
      } finally {
        // Released now rather than when collected: the benchmark waits for an empty scheduler.
        for (const c of children) c.release();
      }
    });
  },
);
