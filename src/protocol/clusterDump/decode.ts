/**
 * Decoding a dump file's bytes (gzip, msgpack, YAML) into plain JS values, before
 * normalization. See the module comment of `../clusterDump.ts` for the encodings.
 */

import { constants as bufferConstants } from "node:buffer";
import { getHeapStatistics } from "node:v8";
import { gunzipSync } from "node:zlib";
import { Unpackr } from "msgpackr";
import { Composer, type Document, LineCounter } from "yaml";
import { formatBytes } from "../../util/parseBytes.ts";
import type { DumpEncoding } from "./encoding.ts";
import { type Ctx, DumpFormatError } from "./errors.ts";
import { MAX_NESTING, TOO_DEEP } from "./normalize.ts";
import { PYYAML_SCALARS } from "./pyyamlScalars.ts";
import { expandedValueCount } from "./yamlAliases.ts";
import { parseYamlNested } from "./yamlNesting.ts";

/** A hint at what non-dump content looks like, for error messages. */
function sniff(data: Uint8Array): string {
  // A gzipped dump named without its .gz (or gunzipped and not renamed): say what it is.
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
    return "it is gzip data: a gzipped dump's name ends in .gz";
  }
  const head = data.subarray(0, 16);
  const text = Buffer.from(head).toString("latin1");
  if (/^\s*[[{]/.test(text)) return "it looks like JSON text";
  if (/^[\x20-\x7e\t\r\n]+$/.test(text)) return `it starts with the text ${JSON.stringify(text)}`;
  return `it starts with the bytes ${Buffer.from(head.subarray(0, 8)).toString("hex")}`;
}

/**
 * The most bytes a gzipped dump of `encoding` may gunzip to: what the decoder
 * could then read within the heap (`decodeMsgpack`, `decodeYaml`). Bounding the
 * gunzip itself matters: its output is outside the heap, and a small file can
 * stand for gigabytes (a 13 MB .msgpack.gz of 3 GB took 6 GB of memory to be
 * refused as too large, a machine with less killing the process unannounced).
 */
export function gunzippedLimit(encoding: DumpEncoding): number {
  const limit = encoding.startsWith("msgpack")
    ? heapAvailable() / MSGPACK_HEAP_PER_BYTE
    : getHeapStatistics().heap_size_limit / YAML_HEAP_PER_BYTE;
  return Math.max(1, Math.min(Math.floor(limit), bufferConstants.MAX_LENGTH));
}

/** `data` gunzipped, refused as too large beyond `maxBytes` ({@link gunzippedLimit}). */
export function gunzip(
  data: Uint8Array,
  ctx: Ctx,
  encoding: DumpEncoding,
  maxBytes = gunzippedLimit(encoding),
): Uint8Array {
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) {
    ctx.fail(null, `not gzip data, as a ${encoding} file must be (${sniff(data)})`);
  }
  let out: Buffer;
  try {
    // zlib stops as soon as the output passes maxOutputLength.
    out = gunzipSync(data, { maxOutputLength: maxBytes });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const msg = e instanceof Error ? e.message : String(e);
    if (code === "ERR_BUFFER_TOO_LARGE") {
      const yaml = encoding.startsWith("yaml");
      ctx.fail(
        null,
        `too large to read${yaml ? " as YAML" : ""} here: ${formatBytes(data.length)} of gzip data gunzip to more than the ${formatBytes(maxBytes)} of ${yaml ? "YAML" : "msgpack"} this process has the heap to read; ${yaml ? "dump as msgpack (Dask's default, weft dump's too), or " : ""}give node more (NODE_OPTIONS=--max-old-space-size=MB)`,
        e,
      );
    }
    if (code === "Z_BUF_ERROR")
      ctx.fail(null, "truncated gzip data (the compressed stream ends early)", e);
    if (code === "Z_DATA_ERROR") ctx.fail(null, `corrupt gzip data (${msg})`, e);
    ctx.fail(null, `cannot decompress the gzip data (${msg})`, e);
  }
  if (out.length === 0) ctx.fail(null, "the gzip stream holds no data");
  return out;
}

/**
 * The heap a msgpack dump takes to read and replay, per byte of it (after gunzip):
 * the decoded tree, its normalized copy and the typed dump are alive together.
 * Measured on dumps grown from `tree.msgpack.gz`: 10.8 MB needed a heap of 104 MB,
 * 31.8 MB one of 291 MB (for `weft replay`, with `--follow-log --json` and for
 * `weft story` alike), about 9 per byte; 10 leaves a margin.
 */
export const MSGPACK_HEAP_PER_BYTE = 10;

/**
 * V8's young generation (three 16 MiB semi-spaces by default), which
 * `heap_size_limit` counts but a dump's long-lived tree cannot stay in: the old
 * generation's limit (`--max-old-space-size`) is what running out of memory hits.
 */
const YOUNG_GENERATION = 48 * 2 ** 20;

/** The old-generation heap left for a dump (or a vector, a stream) to be read into. */
export function heapAvailable(): number {
  const { heap_size_limit, used_heap_size } = getHeapStatistics();
  return Math.max(0, heap_size_limit - YOUNG_GENERATION - used_heap_size);
}

function refuseMsgpackTooLarge(length: number, ctx: Ctx, available: number): void {
  const needed = length * MSGPACK_HEAP_PER_BYTE;
  if (needed > available) {
    ctx.fail(
      null,
      `too large to read here: reading ${formatBytes(length)} of msgpack takes about ${formatBytes(needed)} of heap, beyond the ${formatBytes(available)} this process has left; give node more (NODE_OPTIONS=--max-old-space-size=MB)`,
    );
  }
}

function refuseYamlTooLarge(length: number, ctx: Ctx, heapLimit: number): void {
  const needed = length * YAML_HEAP_PER_BYTE;
  if (needed > heapLimit) {
    ctx.fail(
      null,
      `too large to read as YAML here: parsing ${formatBytes(length)} of YAML takes about ${formatBytes(needed)}, beyond this process's heap limit (${formatBytes(heapLimit)}); dump as msgpack (Dask's default, weft dump's too), or give node more (NODE_OPTIONS=--max-old-space-size=MB)`,
    );
  }
}

/**
 * Refuses `length` bytes of a dump not gzipped that this process has not the heap
 * to decode, as {@link decodeMsgpack} and {@link decodeYaml} would once it is read:
 * the loader asks before reading the file.
 */
export function refuseTooLarge(encoding: "msgpack" | "yaml", length: number, ctx: Ctx): void {
  if (encoding === "msgpack") refuseMsgpackTooLarge(length, ctx, heapAvailable());
  else refuseYamlTooLarge(length, ctx, getHeapStatistics().heap_size_limit);
}

/**
 * `data` as msgpack. A dump too large to read within `heapAvailable` bytes of heap
 * is refused saying so: V8 running out of memory ends the process with its own
 * stack trace, which no handler can catch.
 */
export function decodeMsgpack(data: Uint8Array, ctx: Ctx, available = heapAvailable()): unknown {
  refuseMsgpackTooLarge(data.length, ctx, available);
  const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
  try {
    return unpackr.unpack(data);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // A length that runs past the end: the data cut short, or a corrupt byte that made
    // a length too long (a whole file with bytes overwritten was called truncated).
    if (/unexpected end/i.test(msg)) {
      return ctx.fail(
        null,
        "truncated or corrupt msgpack data (a value runs past the end of the data)",
        e,
      );
    }
    // msgpackr recurses per level: nesting far past MAX_NESTING overflows the stack
    // before normalization can refuse it with the same words.
    if (e instanceof RangeError && /call stack/i.test(msg)) return ctx.fail(null, TOO_DEEP, e);
    if (/end of buffer not reached/i.test(msg)) {
      return ctx.fail(
        null,
        `not a msgpack cluster dump: bytes are left after the first msgpack value (${sniff(data)})`,
        e,
      );
    }
    return ctx.fail(null, `invalid msgpack data (${msg})`, e);
  }
}

/**
 * The heap a YAML dump takes to parse, per byte of it: the `yaml` package builds
 * the whole document's tree before the values (measured: a 15 MB dump peaked at
 * 1.0 GB, a 58 MB one at 3.6 GB). msgpack takes about a quarter of that.
 */
export const YAML_HEAP_PER_BYTE = 60;

/**
 * The most values a YAML dump of `chars` characters may stand for once its
 * aliases are expanded: a document without aliases holds fewer values than
 * characters; aliases may add a million more (about 16 MB of values).
 */
export function aliasedValueLimit(chars: number): number {
  return 2 * chars + 1_000_000;
}

/**
 * `data` as YAML, typed as PyYAML types it. A dump too large to parse within
 * `heapLimit` (this process's) is refused saying so, rather than V8 running out
 * of memory mid-way; one nesting collections deeper than normalization accepts
 * is refused before they are composed, rather than the `yaml` package
 * overflowing the stack; one whose aliases stand for far more values than its
 * size ({@link aliasedValueLimit}) is refused before they are expanded.
 */
export function decodeYaml(
  data: Uint8Array,
  ctx: Ctx,
  heapLimit = getHeapStatistics().heap_size_limit,
): unknown {
  refuseYamlTooLarge(data.length, ctx, heapLimit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch (e) {
    return ctx.fail(null, `not YAML: the file is not UTF-8 text (${sniff(data)})`, e);
  }
  const lines = new LineCounter();
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return ` at line ${line}, column ${col}`;
  };
  try {
    // Plain scalars are typed as PyYAML types them; integers may exceed 2**53.
    // parseDocument's steps, the parser's bounding the nesting.
    const composer = new Composer({
      schema: "failsafe",
      customTags: [...PYYAML_SCALARS, "binary"],
    });
    const tooDeep = (offset: number) => ctx.fail(null, `${TOO_DEEP}${at(offset)}`);
    const tree = parseYamlNested(text, MAX_NESTING, tooDeep, lines.addNewLine);
    let doc: Document.Parsed | undefined;
    for (const next of composer.compose(tree, true, text.length)) {
      if (doc !== undefined) {
        return ctx.fail(null, `invalid YAML: a second document starts${at(next.range[0])}`);
      }
      doc = next;
    }
    if (doc === undefined) return ctx.fail(null, "invalid YAML: no document");
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      const where = first.pos[0] === -1 ? "" : at(first.pos[0]);
      const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more errors)` : "";
      return ctx.fail(null, `invalid YAML: ${first.message}${where}${more}`, first);
    }
    // PyYAML writes an alias for an object met again: allowed, but not beyond what
    // a document of this size could hold written out (an alias bomb).
    const limit = aliasedValueLimit(text.length);
    if (expandedValueCount(doc, limit) > limit) {
      return ctx.fail(
        null,
        `invalid YAML: its aliases stand for more than ${limit.toLocaleString("en-US")} values, far more than ${formatBytes(data.length)} of YAML holds written out (an alias bomb?)`,
      );
    }
    return doc.toJS({ mapAsMap: true, maxAliasCount: -1 });
  } catch (e) {
    if (e instanceof DumpFormatError) throw e;
    return ctx.fail(null, `invalid YAML (${e instanceof Error ? e.message : String(e)})`, e);
  }
}
