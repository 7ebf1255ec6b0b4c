import { dumpEncodingOf } from "../protocol/clusterDump/encoding.ts";

/**
 * What `weft replay` can read:
 * - `dump`: a Dask cluster dump (`.msgpack.gz`, `.msgpack`, `.yaml`, `.yml`, `.yaml.gz`, `.yml.gz`);
 * - `vector`: a conformance vector (`.json`, `.json.gz`; `../shared/conformance/FORMAT.md`);
 * - `stream`: a stimulus stream (`.jsonl`, `.jsonl.gz`; `../shared/bench/README.md`).
 */
export type InputKind = "dump" | "vector" | "stream";

/** The extensions of each kind, for messages. */
export const INPUT_EXTENSIONS =
  "a cluster dump (.msgpack.gz, .msgpack, .yaml, .yml, .yaml.gz, .yml.gz), " +
  "a conformance vector (.json, .json.gz) or a stimulus stream (.jsonl, .jsonl.gz)";

/** The kind of input a file name's extension says, or null when it says none. */
export function inputKindOf(file: string): InputKind | null {
  const name = file.toLowerCase();
  if (/\.jsonl(\.gz)?$/.test(name)) return "stream";
  if (/\.json(\.gz)?$/.test(name)) return "vector";
  if (dumpEncodingOf(name) !== null) return "dump";
  return null;
}
