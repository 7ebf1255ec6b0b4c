/**
 * Dumping the cluster's state to a file (Dask's `Client.dump_cluster_state`):
 * the scheduler's part (`dump-state`, `src/scheduler/dumpState.ts`) and each
 * worker's (`dump_state`, `src/worker/dumpState.ts`), in the layout and the
 * encodings of Dask's cluster dumps, so that `weft replay` and `weft story`
 * (and `src/protocol/clusterDump.ts`) read it as they read Dask's.
 */

import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { gzipSync } from "node:zlib";
import { Packr } from "msgpackr";
import { stringify } from "yaml";
import { dumpEncodingOf } from "../protocol/clusterDump/encoding.ts";
import { weftVersion } from "../protocol/version.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { askEachWorker } from "./askWorkers.ts";

/** The encodings `dumpClusterState` writes: gzipped msgpack (Dask's default) or YAML. */
export type ClusterDumpFormat = "msgpack" | "yaml";

/** Options of `Client.dumpClusterState`. */
export interface DumpClusterStateOptions {
  /** The encoding (default `"msgpack"`); the file name's extension is added unless it has it. */
  readonly format?: ClusterDumpFormat;
}

/** The version entry of a process (Dask's `{host, packages}`). */
function versions(): Record<string, unknown> {
  return {
    host: { hostname: hostname() },
    packages: { weft: weftVersion(), node: process.version },
  };
}

/** `filename` with the extension of `format` (as Dask adds `.msgpack.gz` or `.yaml`). */
export function dumpFileName(filename: string, format: ClusterDumpFormat): string {
  const encoding = dumpEncodingOf(filename);
  const wanted = format === "msgpack" ? "msgpack.gz" : "yaml";
  return encoding === wanted ? filename : `${filename}.${wanted}`;
}

/** Why `options` are not valid dump options, or null. */
export function dumpOptionsProblem(filename: unknown, options: unknown): string | null {
  if (typeof filename !== "string" || filename === "") {
    return `the file name must be a non-empty string, got ${String(filename)}`;
  }
  if (typeof options !== "object" || options === null) return "options must be an object";
  const { format } = options as { format?: unknown };
  if (format !== undefined && format !== "msgpack" && format !== "yaml") {
    return `format must be "msgpack" or "yaml", got ${JSON.stringify(format)}`;
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
): Promise<Record<string, unknown>> {
  return askEachWorker(
    addresses,
    async (address): Promise<unknown> => {
      try {
        const rpc = await peers.get(address);
        return await rpc.call("dump_state", {});
      } catch (err) {
        return `${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
      }
    },
    () => null,
  );
}

/** The whole dump, `{scheduler, workers, versions}`. */
export function clusterDump(
  scheduler: unknown,
  workers: Record<string, unknown>,
): Record<string, unknown> {
  const workerVersions: Record<string, unknown> = {};
  for (const [address, w] of Object.entries(workers)) {
    if (typeof w === "object" && w !== null) workerVersions[address] = versions();
  }
  return { scheduler, workers, versions: { scheduler: versions(), workers: workerVersions } };
}

/** Write `dump` to `path` in `format`. */
export async function writeClusterDump(
  dump: Record<string, unknown>,
  path: string,
  format: ClusterDumpFormat,
): Promise<void> {
  if (format === "msgpack") {
    // Plain msgpack maps and arrays, as Python's msgpack writes and reads them.
    const packr = new Packr({ useRecords: false, variableMapSize: true });
    await writeFile(path, gzipSync(packr.pack(dump)));
  } else {
    await writeFile(path, stringify(dump, { aliasDuplicateObjects: false }));
  }
}
