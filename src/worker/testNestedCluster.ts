/**
 * Tasks that start a cluster of their own from their code (as Dask lets a task
 * start a `LocalCluster(processes=False)`), compute on it and close it: an async
 * function, and a plain one whose promise goes on after its synchronous call.
 */

import { LocalCluster } from "../client/localCluster.ts";
import { defineTask } from "./taskRegistry.ts";

export const cube = defineTask("nestedCluster.cube", (x: number) => x * x * x);

async function cubeOnNestedCluster(x: number, executor: "threads" | "inline"): Promise<number> {
  const cluster = await LocalCluster.start({
    workers: 1,
    threadsPerWorker: 1,
    executor,
    taskModules: [import.meta.url],
  });
  try {
    const client = await cluster.client();
    return await client.submit(cube, x);
  } finally {
    await cluster.close();
  }
}

export const nestedAsync = defineTask("nestedCluster.async", async (x: number) =>
  cubeOnNestedCluster(x, "threads"),
);

export const nestedPlain = defineTask("nestedCluster.plain", (x: number) =>
  cubeOnNestedCluster(x, "inline"),
);
