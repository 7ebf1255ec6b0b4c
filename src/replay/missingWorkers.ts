/** Workers the scheduler's record lists that the dump holds no entry for. */

import type { ClusterDump } from "../protocol/clusterDump.ts";

/**
 * The addresses of the scheduler's workers that the dump's `workers` lacks, in the
 * scheduler's order. Dask asks every worker the scheduler knows at the moment it
 * dumps its own state, and writes the error for one that did not answer, so none
 * should be missing: a YAML dump cut just before a worker's entry (PyYAML sorts
 * the addresses, so the last ones go) still reads as a whole dump, and the replay
 * would pass without them. weft's own dumps ask the scheduler, then its workers,
 * so a worker that left in between is missing too.
 */
export function workersWithoutEntry(dump: ClusterDump): string[] {
  return [...dump.scheduler.workers.keys()].filter(
    (a) => !dump.workers.has(a) && !dump.unavailableWorkers.has(a),
  );
}
