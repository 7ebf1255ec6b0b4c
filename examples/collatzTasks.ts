/**
 * The task functions of the Collatz search example (`examples/collatz.ts`):
 * a graph that grows as it runs. `collatz.search(lo, hi)` splits its range
 * into two tasks it submits through its own client, until a range is at most
 * `leaf` numbers long; a leaf finds the number with the longest Collatz
 * sequence in its range, and records it in the cluster's variable
 * `collatz.best` under the lock `collatz.best` if it beats the one there.
 */

import { getClient, workerClient } from "../src/client/taskClient.ts";
import { defineTask } from "../src/worker/taskRegistry.ts";

/** A number and the length of its Collatz sequence (steps to reach 1). */
export interface Best {
  readonly n: number;
  readonly steps: number;
}

/** The largest odd number whose next step, 3x + 1, is still below 2**53 (exact in a double). */
const LARGEST_EXACT_ODD = (Number.MAX_SAFE_INTEGER - 1) / 3;

/**
 * The steps of `n`'s Collatz sequence to 1. A RangeError if the sequence passes
 * 2**53, where a double rounds 3x + 1 and the count would be silently wrong (the
 * first n to do so is 319,804,831).
 */
export function collatzSteps(n: number): number {
  let steps = 0;
  for (let x = n; x !== 1; steps++) {
    if (x % 2 === 0) x = x / 2;
    else if (x <= LARGEST_EXACT_ODD) x = 3 * x + 1;
    else {
      throw new RangeError(
        `the Collatz sequence of ${n} passes 2**53: its steps cannot be counted exactly`,
      );
    }
  }
  return steps;
}

/** The better of two: more steps, then the smaller number. */
export function better(a: Best | null, b: Best): Best {
  if (a === null || b.steps > a.steps || (b.steps === a.steps && b.n < a.n)) return b;
  return a;
}

/** The best number of `lo..hi-1` (1 ≤ lo < hi), by a direct loop. */
export function bestIn(lo: number, hi: number): Best {
  let best: Best | null = null;
  for (let n = lo; n < hi; n++) best = better(best, { n, steps: collatzSteps(n) });
  return best as Best;
}

/** Records `found` in the variable `collatz.best` if it beats the one there, under the lock. */
async function record(found: Best): Promise<void> {
  const client = await getClient();
  const lock = client.lock("collatz.best");
  const best = client.variable<Best>("collatz.best");
  await lock.acquire();
  try {
    const now = await best.get({ timeoutMs: 0 }).catch(() => null);
    if (better(now, found) === found && found !== now) await best.set(found);
  } finally {
    await lock.release();
  }
}

/** The best number of `lo..hi-1`, found by tasks that split the range down to `leaf` numbers. */
export const search = defineTask(
  "collatz.search",
  async (lo: number, hi: number, leaf: number): Promise<Best> => {
    if (hi - lo <= leaf) {
      const found = bestIn(lo, hi);
      // Holding the slot: the lock is held for a moment only.
      await record(found);
      return found;
    }
    const mid = Math.floor((lo + hi) / 2);
    return workerClient(async (client) => {
      const [a, b] = await client.gather([
        client.submit(search, lo, mid, leaf),
        client.submit(search, mid, hi, leaf),
      ]);
      return better(a, b);
    });
  },
);
