/** The entry points: reading a dump from a file or from bytes in memory. */

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { fileProblem } from "../../util/readFailure.ts";
import { regularFileSize, regularFileSizeSync } from "../../util/regularFile.ts";
import { decodeMsgpack, decodeYaml, gunzip, refuseTooLarge } from "./decode.ts";
import { type DumpEncoding, dumpEncodingOf, SUPPORTED_EXTENSIONS } from "./encoding.ts";
import { Ctx, DumpFormatError } from "./errors.ts";
import { buildDump, type ClusterDump } from "./topLevel.ts";

/** Options of {@link parseClusterDump}. */
export interface ParseClusterDumpOptions {
  /** The encoding; by default implied by the extension of the source label. */
  readonly encoding?: DumpEncoding;
}

/**
 * Decodes and validates a cluster dump held in memory. `source` names it in
 * errors and, unless `options.encoding` is given, its extension selects the
 * encoding. Throws {@link DumpFormatError} for anything unreadable.
 */
export function parseClusterDump(
  data: Uint8Array,
  source: string,
  options: ParseClusterDumpOptions = {},
): ClusterDump {
  const ctx: Ctx = new Ctx(source);
  const encoding = options.encoding ?? dumpEncodingOf(source);
  if (encoding === null) {
    ctx.fail(null, `unsupported file extension: a cluster dump is ${SUPPORTED_EXTENSIONS}`);
  }
  let yaml: Uint8Array | null = null;
  try {
    if (data.length === 0) ctx.fail(null, "the file is empty");
    let bytes = data;
    if (encoding === "msgpack.gz" || encoding === "yaml.gz") bytes = gunzip(data, ctx, encoding);
    if (!encoding.startsWith("msgpack")) yaml = bytes;
    const decoded = yaml === null ? decodeMsgpack(bytes, ctx) : decodeYaml(bytes, ctx);
    return buildDump(decoded, ctx, encoding);
  } catch (e) {
    if (e instanceof DumpFormatError) throw yaml === null ? e : saidIfCutShort(e, yaml);
    // Not expected: report it as a load failure rather than leak a raw TypeError.
    const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new DumpFormatError(source, null, `cannot read the dump (${msg})`, { cause: e });
  }
}

/**
 * `e` with a word on how the YAML ends when it ends without the newline every YAML
 * dump ends with: cut at a byte, it still parses, and the error was of a field
 * "missing" from the last entry read (`stimulus_log[166].stimulus_id: missing`).
 */
function saidIfCutShort(e: DumpFormatError, yaml: Uint8Array): DumpFormatError {
  if (yaml.length === 0 || yaml[yaml.length - 1] === 0x0a) return e;
  // Not text (binary, gzip data), or a flow document such as JSON, which ends without one.
  if (
    e.reason.startsWith("not YAML:") ||
    /^\s*[[{]/.test(Buffer.from(yaml.subarray(0, 64)).toString())
  ) {
    return e;
  }
  return new DumpFormatError(
    e.file,
    e.path,
    `${e.reason} (the YAML does not end with a newline, as a whole dump does: is the file cut short?)`,
    { cause: e.cause },
  );
}

function displayPath(path: string | URL): string {
  return typeof path === "string"
    ? path
    : path.protocol === "file:"
      ? fileURLToPath(path)
      : path.href;
}

function readError(file: string, e: unknown): DumpFormatError {
  const problem = fileProblem(e);
  const reason =
    problem !== null
      ? `cannot read the file: ${problem}`
      : (e as { code?: unknown }).code === "ENOTREGULAR"
        ? (e as Error).message
        : `cannot read the file (${e instanceof Error ? e.message : String(e)})`;
  return new DumpFormatError(file, null, reason, { cause: e });
}

function checkExtension(file: string): DumpEncoding {
  const encoding = dumpEncodingOf(file);
  if (encoding === null) {
    throw new DumpFormatError(
      file,
      null,
      `unsupported file extension: a cluster dump is ${SUPPORTED_EXTENSIONS}`,
    );
  }
  return encoding;
}

/**
 * Refuses, from its size alone, a dump not gzipped that is too large to decode
 * here: read whole first, a 1.9 GB `.msgpack` took 1.9 GB of memory before
 * `decodeMsgpack` refused it. A gzipped one is bounded as it is gunzipped.
 */
function checkSize(file: string, encoding: DumpEncoding, size: number): void {
  if (encoding === "msgpack" || encoding === "yaml") refuseTooLarge(encoding, size, new Ctx(file));
}

/**
 * Reads a cluster dump file (`.msgpack.gz`, `.msgpack`, `.yaml`, `.yml`,
 * `.yaml.gz`, `.yml.gz`) and returns its normalized, typed content. Rejects
 * with {@link DumpFormatError} for an unreadable file or invalid content.
 */
export async function loadClusterDump(path: string | URL): Promise<ClusterDump> {
  const file = displayPath(path);
  const encoding = checkExtension(file);
  let data: Uint8Array;
  try {
    checkSize(file, encoding, await regularFileSize(path));
    data = await readFile(path);
  } catch (e) {
    if (e instanceof DumpFormatError) throw e;
    throw readError(file, e);
  }
  return parseClusterDump(data, file);
}

/** Synchronous {@link loadClusterDump}. */
export function loadClusterDumpSync(path: string | URL): ClusterDump {
  const file = displayPath(path);
  const encoding = checkExtension(file);
  let data: Uint8Array;
  try {
    checkSize(file, encoding, regularFileSizeSync(path));
    data = readFileSync(path);
  } catch (e) {
    if (e instanceof DumpFormatError) throw e;
    throw readError(file, e);
  }
  return parseClusterDump(data, file);
}
