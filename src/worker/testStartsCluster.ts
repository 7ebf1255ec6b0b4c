/**
 * A task module that starts a cluster as it is imported, with itself as the
 * cluster's task module: a program defining its tasks beside the code that
 * starts its cluster. Bounded here (the depth travels in each new thread's copy
 * of the environment) so that, were pool threads not refused a cluster, the
 * test would fail rather than start threads without end.
 */

import { LocalCluster } from "../client/localCluster.ts";
import { defineTask } from "./taskRegistry.ts";

export const square = defineTask("startsCluster.square", (x: number) => x * x);

const DEPTH = "WEFT_TEST_STARTS_CLUSTER_DEPTH";
const depth = Number(process.env[DEPTH] ?? "0");
if (depth >= 2) throw new Error(`a cluster was started ${depth} pool threads deep`);
process.env[DEPTH] = String(depth + 1);
const cluster = await LocalCluster.start({
  workers: 1,
  threadsPerWorker: 1,
  taskModules: [import.meta.url],
});
await cluster.close();
