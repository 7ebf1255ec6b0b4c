/**
 * Task functions of the tests of a spilled value lost from disk while a task
 * holding it waits for another that needs it (a task module, as testTasks.ts).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { secede } from "../worker/taskContext.ts";
import { defineTask } from "../worker/taskRegistry.ts";
import type { Future } from "./future.ts";
import { getClient } from "./taskClient.ts";
import { byteSum } from "./testTasks.ts";

/**
 * Reads `b`, then, through the task's client (seceded, or holding its thread), waits
 * `ms` and awaits `byteSum` of the future published as `{ future }` under `name` (of `b`'s key): `b`'s
 * byte sum plus that task's (run on one of `workers`, if given), or that task's error's
 * message.
 */
export const awaitsAnotherReader = defineTask(
  "awaitsAnotherReader",
  async (
    b: Uint8Array,
    name: string,
    ms: number,
    seceding: boolean,
    workers?: string[],
  ): Promise<number | string> => {
    const own = b.reduce((a, x) => a + x, 0);
    const client = await getClient();
    if (seceding) secede();
    await sleep(ms);
    const { future } = await client.getDataset<{ future: Future<Uint8Array> }>(name);
    try {
      const where = workers === undefined ? {} : { workers };
      return own + (await client.submitWith({ pure: false, ...where }, byteSum, future));
    } catch (err) {
      return (err as Error).message;
    }
  },
);

/**
 * Reads `b`, asks for the task's client (and secedes, with `seceding`), and waits
 * `ms` without using it: `b`'s byte sum.
 */
export const holdsWithClient = defineTask(
  "holdsWithClient",
  async (b: Uint8Array, ms: number, seceding: boolean): Promise<number> => {
    const own = b.reduce((a, x) => a + x, 0);
    await getClient();
    if (seceding) secede();
    await sleep(ms);
    return own;
  },
);
