/** The task functions of the cluster benchmarks (a task module every worker loads). */

import { defineTask } from "../src/worker/taskRegistry.ts";

/** `x + 1`. */
export const inc = defineTask("inc", (x: number) => x + 1);
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
