/** The encodings of a dump file, told by its extension. */

/** How a dump file is encoded. */
export type DumpEncoding = "msgpack" | "msgpack.gz" | "yaml" | "yaml.gz";

export const SUPPORTED_EXTENSIONS = ".msgpack.gz, .msgpack, .yaml, .yml, .yaml.gz or .yml.gz";

/** The encoding implied by a file name's extension, or null when it is not a dump extension. */
export function dumpEncodingOf(fileName: string): DumpEncoding | null {
  const name = fileName.toLowerCase();
  if (name.endsWith(".msgpack.gz")) return "msgpack.gz";
  if (name.endsWith(".msgpack")) return "msgpack";
  if (name.endsWith(".yaml.gz") || name.endsWith(".yml.gz")) return "yaml.gz";
  if (name.endsWith(".yaml") || name.endsWith(".yml")) return "yaml";
  return null;
}
