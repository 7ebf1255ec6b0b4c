/**
 * Dumping the cluster's state to a file (Dask's `Client.dump_cluster_state`):
 * the scheduler's part (`dump-state`, `src/scheduler/dumpState.ts`) and each
 * worker's (`dump_state`, `src/worker/dumpState.ts`), in the layout and the
 * encodings of Dask's cluster dumps, so that `weft replay` and `weft story`
 * (and `src/protocol/clusterDump.ts`) read it as they read Dask's.
 */

import { withReplyLimit } from "../comm/replyLimit.ts";
import type { ClusterDumpFormat } from "../protocol/clusterDump/write.ts";
import { showValue } from "../util/showValue.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { askEachWorker } from "./askWorkers.ts";

export type { ClusterDumpFormat } from "../protocol/clusterDump/write.ts";

/** Options of `Client.dumpClusterState`. */
export interface DumpClusterStateOptions {
  /**
   * The encoding (default `"msgpack"`); its extension is added to the file name unless
   * the name has one of this format's (another format's does not count, as in Dask's).
   */
  readonly format?: ClusterDumpFormat;
}

/** Why `options` are not valid dump options, or null. */
export function dumpOptionsProblem(filename: unknown, options: unknown): string | null {
  if (typeof filename !== "string" || filename === "") {
    return `the file name must be a non-empty string, got ${showValue(filename)}`;
  }
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    return `options must be an object, got ${showValue(options)}`;
  }
  const { format } = options as { format?: unknown };
  if (format !== undefined && format !== "msgpack" && format !== "yaml") {
    return `format must be "msgpack" or "yaml", got ${showValue(format)}`;
  }
  return null;
}

/**
 * Each worker's dump by address; a worker that could not be asked gets the
 * text of its error in its place, as in Dask's dumps.
 */
export async function workerDumps(
  peers: PeerPool,
  addresses: readonly string[],
  who: string,
): Promise<Record<string, unknown>> {
  return askEachWorker(
    addresses,
    async (address): Promise<unknown> => {
      try {
        const rpc = await peers.get(address);
        // A dump larger than this end takes is refused by the worker, for this call alone.
        return await rpc.call("dump_state", withReplyLimit({}, who, rpc.comm));
      } catch (err) {
        return `${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
      }
    },
    () => null,
  );
}
