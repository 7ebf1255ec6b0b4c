/**
 * A simulated cluster as a cluster dump in Dask's layout (`weft sim --dump`):
 * the scheduler's state machine and every worker's, dead ones included, as a
 * real cluster's `Client.dumpClusterState` writes them, so that `weft story`
 * tells a key's story across the run and `weft replay` replays each worker
 * (its times are the run's virtual seconds).
 */

import { clusterDump } from "../protocol/clusterDump/write.ts";
import { schedulerDumpDict } from "../scheduler/dumpState.ts";
import { workerDumpDict } from "../worker/dumpState.ts";
import type { Simulation } from "./simulation.ts";

/** The address the simulated scheduler is named by in the dump. */
export const SIM_SCHEDULER_ADDRESS = "sim://scheduler";

/** `sim` as it stands (at its end, or where it failed) as a dump. */
export function simDump(sim: Simulation): Record<string, unknown> {
  const workers: Record<string, unknown> = {};
  for (const [address, w] of sim.workers) {
    workers[address] = workerDumpDict({
      address,
      scheduler: SIM_SCHEDULER_ADDRESS,
      status: w.alive ? "running" : "closed",
      memoryLimit: null,
      logs: [],
      state: w.state,
    });
  }
  const scheduler = schedulerDumpDict(sim.scheduler.state, {
    address: SIM_SCHEDULER_ADDRESS,
    status: "running",
  });
  return clusterDump(scheduler, workers);
}
