/**
 * The odd values a hostile or buggy peer may put in a message's fields: fast-check's
 * `anything()` (nested objects, arrays, Maps, Sets, typed arrays, dates, sparse arrays,
 * null-prototype objects), and values picked by hand for the checks they try (NaN, huge
 * and negative counts, very long strings, deep nesting, keys of the prototype).
 */

import fc from "fast-check";

/** Values picked by hand: edges of the numbers, strings and shapes a check may miss. */
export const EDGE_VALUES: readonly unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_VALUE,
  1e300,
  2 ** 31,
  -(2 ** 31),
  10n,
  "",
  "x",
  "__proto__",
  "constructor",
  "toString",
  "x".repeat(100_000),
  "tcp://127.0.0.1:1",
  [],
  [[]],
  [null],
  [1, 2, 3],
  ["__proto__"],
  {},
  { __proto__: null },
  new Map(),
  new Map<unknown, unknown>([[1, 2]]),
  new Map([["__proto__", 1]]),
  new Set([1]),
  new Uint8Array(4),
  new Date(0),
  nested(2_000),
  Array.from({ length: 100_000 }, (_, i) => `k${i}`),
];

/** `depth` arrays one inside the other. */
function nested(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** `n` samples of fast-check's `anything()`, from `seed`. */
export function anythingPool(n: number, seed: number): unknown[] {
  return fc.sample(
    fc.anything({
      maxDepth: 3,
      withMap: true,
      withSet: true,
      withBigInt: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withObjectString: true,
    }),
    { numRuns: n, seed },
  );
}
