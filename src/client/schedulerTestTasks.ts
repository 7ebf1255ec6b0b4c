/**
 * Task functions the client tests run on the scheduler (`runOnScheduler`,
 * `registerSchedulerPlugin`): a task module only the scheduler imports, so
 * that the tests see it imported there.
 */

import type { SchedulerPlugin } from "../scheduler/plugins.ts";
import { currentScheduler } from "../scheduler/schedulerCode.ts";
import { defineTask } from "../worker/taskRegistry.ts";

/** The scheduler's address and its workers' names, read from the scheduler itself. */
export const schedulerView = defineTask("schedulerView", async (tag: string) => {
  await Promise.resolve(); // currentScheduler holds across awaits
  const s = currentScheduler();
  return {
    tag,
    address: s.address,
    workers: [...s.state.workers.values()].map((w) => w.name),
    tasks: new Map([...s.state.tasks.values()].map((ts) => [ts.key, ts.state])),
  };
});

/** Throws, as code run on the scheduler may. */
export const schedulerBoom = defineTask("schedulerBoom", (why: string) => {
  throw new RangeError(why);
});

/** The plugins made by {@link transitionCounter}, by name: what the tests look at. */
export const countingPlugins = new Map<string, { count: number; closed: boolean }>();

/**
 * A scheduler plugin counting the transitions into `finish`, under `name`; with
 * `failStart` its start throws.
 */
export const transitionCounter = defineTask(
  "transitionCounter",
  (name: string, finish: string, failStart = false): SchedulerPlugin => {
    const seen = { count: 0, closed: false };
    countingPlugins.set(name, seen);
    return {
      name,
      start: (scheduler) => {
        if (failStart) throw new Error(`${name} cannot start on ${scheduler.address}`);
      },
      transition: (_key, _start, to) => {
        if (to === finish) seen.count++;
      },
      close: () => {
        seen.closed = true;
      },
    };
  },
);
