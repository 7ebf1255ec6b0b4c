/**
 * Task functions for the client and cluster tests (a task module: loaded by
 * every worker, and imported by the tests for typed submits).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { defineTask } from "../worker/taskRegistry.ts";

/** An error class of the task module's own. */
class ValueError extends Error {
  override name = "ValueError";
}

export const inc = defineTask("inc", (x: number) => x + 1);
export const add = defineTask("add", (a: number, b: number) => a + b);
export const sum = defineTask("sum", (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0));
export const identity = defineTask("identity", <T>(x: T): T => x);
export const double = defineTask("double", (x: number) => 2 * x);
export const boom = defineTask("boom", (message: string): number => {
  throw new ValueError(message);
});
export const slowInc = defineTask("slowInc", async (x: number, ms: number) => {
  await sleep(ms);
  return x + 1;
});
/** Returns a value that cannot be cloned (a function inside). */
export const uncloneable = defineTask("uncloneable", () => ({ callback: () => 1 }));

const attempts = new Map<string, number>();
/** Fails the first `failures` calls with the same `id` (per process), then returns `value`. */
export const flaky = defineTask("flaky", (id: string, failures: number, value: number) => {
  const n = (attempts.get(id) ?? 0) + 1;
  attempts.set(id, n);
  if (n <= failures) throw new ValueError(`attempt ${n} of ${id} failed`);
  return value;
});
