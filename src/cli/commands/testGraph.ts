/** A graph module for the `weft run` tests: it defines its task and exports `graph` and `keys`. */

import { defineTask } from "../../worker/taskRegistry.ts";

defineTask("cli.square", (x: number) => x * x);
defineTask("cli.sum", (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0));
defineTask("cli.counts", (words: readonly string[]) => {
  const m = new Map<string, number>();
  for (const w of words) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
});

/** A function returning the graph, a Map (a plain object works too). */
export function graph(): Map<string, unknown> {
  return new Map<string, unknown>([
    ["a", ["cli.square", 3]],
    ["b", ["cli.square", 4]],
    ["total", ["cli.sum", ["a", "b"]]],
    ["words", ["cli.counts", ["x", "y", "x"]]],
  ]);
}

export const keys = ["total", "words"];
