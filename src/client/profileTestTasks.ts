/** A task module for the profile tests: a task that keeps its thread's CPU busy. */

import { defineTask } from "../worker/taskRegistry.ts";

/** Spins for `ms` milliseconds in a function of its own, which a profile names. */
function profiledSpin(ms: number): number {
  const until = Date.now() + ms;
  let x = 0;
  while (Date.now() < until) x = (x + Math.sqrt(x + 1)) % 1e9;
  return x;
}

export const spinFor = defineTask("spinFor", (ms: number): number => profiledSpin(ms));
