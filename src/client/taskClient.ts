/**
 * A client for task code (Dask's `get_client` and `worker_client`): a task
 * submits more tasks, and waits for them, on the cluster running it, so that
 * a graph can grow as it runs (a search that decides where to look next, a
 * recursion whose depth the data decides).
 *
 * ```ts
 * export const fib = defineTask("fib", async (n: number): Promise<number> => {
 *   if (n < 2) return n;
 *   return workerClient(async (client) => {
 *     const [a, b] = [client.submit(fib, n - 1), client.submit(fib, n - 2)];
 *     return (await a) + (await b);
 *   });
 * });
 * ```
 */

import { showValue } from "../util/showValue.ts";
import { rejoin, secede, taskClient } from "../worker/taskContext.ts";
import type { Client } from "./client.ts";

/**
 * The client of the running task's code (Dask's `get_client()`), connected to
 * the scheduler of the worker running it on the first call on its thread, and
 * kept for the thread's later tasks (do not close it: one closed anyway is
 * replaced by a new one at the next call). Throws outside a task.
 *
 * A task waiting for others must not hold its thread meanwhile, or a worker
 * whose threads all wait would deadlock: {@link secede} first, and
 * {@link rejoin} before computing on, or use {@link workerClient}, which does.
 * Futures a task submits are its client's: they cannot be the task's result
 * (results are data), and they are released when they are no longer
 * referenced, as any future.
 */
export async function getClient(): Promise<Client> {
  return (await taskClient()) as Client;
}

/**
 * Run `fn` with the task's client, outside the worker's thread pool (Dask's
 * `with worker_client()`): the task secedes, so that the tasks it waits for
 * can run in its slot, and rejoins (waits for a free slot) once `fn` is over,
 * whether it resolved or threw. Call it from an `async` task function.
 */
export async function workerClient<T>(fn: (client: Client) => Promise<T> | T): Promise<T> {
  // Before seceding: a bad fn found after it would fail as "fn is not a function".
  if (typeof fn !== "function") {
    throw new TypeError(`workerClient: fn must be a function of the client, got ${showValue(fn)}`);
  }
  const client = (await taskClient("workerClient()")) as Client;
  secede();
  try {
    return await fn(client);
  } finally {
    await rejoin();
  }
}
