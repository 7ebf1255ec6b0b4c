/**
 * Writing a cluster dump in Dask's layout and encodings (`{scheduler,
 * workers, versions}`; gzipped msgpack or YAML), as `Client.dumpClusterState`
 * and `weft sim --dump` make them, for `weft replay` and `weft story`.
 */

import { hostname } from "node:os";
import { gzipSync } from "node:zlib";
import { Packr } from "msgpackr";
import { writeWholeFile } from "../../util/wholeFile.ts";
import { weftVersion } from "../version.ts";
import { dumpEncodingOf } from "./encoding.ts";

/** The encodings a dump is written in: gzipped msgpack (Dask's default) or YAML. */
export type ClusterDumpFormat = "msgpack" | "yaml";

/** The version entry of a process (Dask's `{host, packages}`). */
function versions(): Record<string, unknown> {
  return {
    host: { hostname: hostname() },
    packages: { weft: weftVersion(), node: process.version },
  };
}

/**
 * `filename` with the extension of `format` (as Dask adds `.msgpack.gz` or
 * `.yaml`) unless it has one of the format's that the readers take
 * (`.msgpack`, `.msgpack.gz`; `.yaml`, `.yml`, `.yaml.gz`, `.yml.gz`): then
 * it is written in that one, gzipped or not (`writeClusterDump`).
 */
export function dumpFileName(filename: string, format: ClusterDumpFormat): string {
  const encoding = dumpEncodingOf(filename);
  if (encoding?.startsWith(format)) return filename;
  return `${filename}.${format === "msgpack" ? "msgpack.gz" : "yaml"}`;
}

/**
 * The whole dump, `{scheduler, workers, versions}`; a worker whose entry is
 * not an object (the text of the error met asking it) has no versions.
 */
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

/**
 * Write `dump` to `path` in `format`, gzipped if the name ends in `.gz`, or
 * has no dump extension and `format` is msgpack.
 */
export async function writeClusterDump(
  dump: Record<string, unknown>,
  path: string,
  format: ClusterDumpFormat,
): Promise<void> {
  // Plain msgpack maps and arrays, as Python's msgpack writes and reads them.
  const bytes =
    format === "msgpack"
      ? new Packr({ useRecords: false, variableMapSize: true }).pack(dump)
      : // Loaded for a YAML dump only: the yaml package is some 0.1 s of CPU that every
        // process with a client (each `weft` command) paid at start for a dump it rarely writes.
        Buffer.from((await import("./pyyamlWrite.ts")).stringifyForPyYaml(dump));
  // Read back by the name's extension: gzipped when it says so (Dask's default, .msgpack.gz).
  const gzipped = dumpEncodingOf(path)?.endsWith(".gz") ?? format === "msgpack";
  await writeWholeFile(path, gzipped ? gzipSync(bytes) : bytes);
}
