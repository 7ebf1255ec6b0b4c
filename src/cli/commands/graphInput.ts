/**
 * Reading the graph `weft run` computes: a JSON file (a bare graph
 * `{key: [fn, ...args]}`, or `{"graph": {...}, "keys": [...], "tasks": [...]}`
 * with task modules relative to the file), or a module exporting `graph` (an
 * object or a Map, a promise of one, or a function returning either) and optionally
 * `keys`; the module is a task module too (it may `defineTask`).
 */

import { constants as bufferConstants } from "node:buffer";
import { readFile } from "node:fs/promises";
import { dirname, extname, resolve } from "node:path";
import type { Graph } from "../../client/graph.ts";
import { asError } from "../../util/asError.ts";
import { importModule } from "../../util/importModule.ts";
import { jsonErrorWithPlace } from "../../util/jsonErrorPlace.ts";
import { closestName } from "../../util/knownOptions.ts";
import { unlessIdle } from "../../util/loopIdle.ts";
import { formatBytes } from "../../util/parseBytes.ts";
import { fileProblem } from "../../util/readFailure.ts";
import { regularFileSize } from "../../util/regularFile.ts";
import {
  type UnhandledRejection,
  withUnhandledRejections,
} from "../../util/unhandledRejections.ts";
import { moduleUrl } from "../../worker/workerOptions.ts";

/** The input cannot be used; the message says why. */
export class GraphInputError extends Error {
  override name = "GraphInputError";
}

/** A graph to compute, the keys wanted (default: the sinks) and the task modules it needs. */
export interface GraphInput {
  readonly graph: Graph;
  readonly keys: readonly string[] | undefined;
  readonly taskModules: readonly string[];
  /**
   * The JSON wrapper's `sim` field as it is (`weft sim`'s costs by function name,
   * which `weft run` has no use for), or undefined.
   */
  readonly sim?: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The fields of a JSON graph file's wrapper form. */
const WRAPPER_FIELDS: readonly string[] = ["graph", "keys", "tasks", "sim"];

function checkKeys(keys: unknown, file: string): readonly string[] | undefined {
  if (keys === undefined) return undefined;
  if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
    throw new GraphInputError(`${file}: keys must be an array of strings`);
  }
  return keys;
}

/**
 * The text of a JSON file, in the encoding its byte order mark says, without the
 * mark, which Windows editors put first: UTF-8's (Notepad, PowerShell's `Out-File
 * -Encoding utf8`) JSON.parse refused as an invisible "Unexpected token", and
 * UTF-16's (PowerShell 5's `>` and `Out-File` by default write UTF-16LE) was read
 * as UTF-8, every other byte a NUL. UTF-8 without a mark otherwise, as JSON is.
 */
function textOf(bytes: Buffer): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return bytes.subarray(3).toString("utf8");
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString("utf16le");
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    // Big-endian: swapped into a copy (an odd last byte dropped), then read as little.
    const body = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1)));
    return body.swap16().toString("utf16le");
  }
  return bytes.toString("utf8");
}

async function fromJson(file: string): Promise<GraphInput> {
  let text: string;
  try {
    text = textOf(await readFile(file));
  } catch (err) {
    throw new GraphInputError(`${file}: cannot read the graph: ${(err as Error).message}`);
  }
  return fromJsonText(text, file, dirname(resolve(file)));
}

/** The graph JSON `text` holds, `file` naming it in errors; its task modules are relative to `dir`. */
function fromJsonText(text: string, file: string, dir: string): GraphInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new GraphInputError(`${file}: cannot read the graph: ${jsonErrorWithPlace(text, err)}`);
  }
  if (!isRecord(data)) throw new GraphInputError(`${file}: expected a JSON object`);
  if (!isRecord(data.graph)) return { graph: data, keys: undefined, taskModules: [] };
  // The wrapper form holds graph, keys and tasks alone: other keys mean a bare graph
  // with a key named "graph", which would be read as the wrapper, the rest dropped.
  const others = Object.keys(data).filter((k) => !WRAPPER_FIELDS.includes(k));
  if (others.length > 0) {
    // `"key": [...]` beside a graph is likelier the wrapper's field misspelt than a task.
    const slips = others.flatMap((k) => {
      const meant = closestName(k, WRAPPER_FIELDS);
      return meant !== null && !Object.hasOwn(data, meant)
        ? [`${JSON.stringify(k)} is a misspelt ${JSON.stringify(meant)}`]
        : [];
    });
    throw new GraphInputError(
      `${file}: a graph with a key "graph" (besides ${others.map((k) => JSON.stringify(k)).join(", ")}) cannot be told from the {"graph": {...}, "keys": [...], "tasks": [...]} form: wrap it as {"graph": {...}}${slips.length > 0 ? `, or, if ${slips.join(" and ")}, name it so` : ""}`,
    );
  }
  const tasks = data.tasks ?? [];
  if (!Array.isArray(tasks) || !tasks.every((t) => typeof t === "string")) {
    throw new GraphInputError(`${file}: tasks must be an array of module paths`);
  }
  return {
    graph: data.graph,
    keys: checkKeys(data.keys, file),
    taskModules: tasks.map((t) => moduleUrl(resolve(dir, t))),
    ...(data.sim !== undefined ? { sim: data.sim } : {}),
  };
}

async function fromModule(file: string): Promise<GraphInput> {
  const url = moduleUrl(file);
  let mod: Record<string, unknown>;
  let unhandled: UnhandledRejection[];
  try {
    ({ value: mod, unhandled } = await withUnhandledRejections(() =>
      unlessIdle(
        importModule(url),
        () =>
          new Error(
            "its import never finished: a top-level await waits on what nothing is left to settle",
          ),
      ),
    ));
  } catch (err) {
    throw new GraphInputError(`${file}: cannot import: ${(err as Error).message}`);
  }
  let graph = mod.graph ?? mod.default;
  // Said from what was recorded: handled now, it had Node.js warn that it was handled late.
  const first = unhandled[0];
  if (first !== undefined) {
    throw new GraphInputError(
      first.promise === graph
        ? `${file}: its graph promise rejected: ${asError(first.reason).message}`
        : `${file}: cannot import: a promise it made rejected, and nothing handled it: ${asError(first.reason).message}`,
    );
  }
  // `export const graph = build()` of an async build is awaited as a graph function's
  // promise is: it has no keys, and was computed as an empty graph, `{}` printed, exit 0.
  const failed =
    typeof graph === "function" ? "its graph function threw" : "its graph promise rejected";
  try {
    if (typeof graph === "function") graph = (graph as () => unknown)();
    if (isThenable(graph)) graph = await untilSettled(graph, file);
  } catch (err) {
    if (err instanceof GraphInputError) throw err;
    throw new GraphInputError(`${file}: ${failed}: ${asError(err).message}`);
  }
  if (!isRecord(graph)) {
    throw new GraphInputError(
      `${file}: export a graph: \`export const graph = { key: ["fn", ...args] }\` (or a Map, or a function returning one)`,
    );
  }
  return {
    graph,
    keys: checkKeys(mod.keys, file),
    taskModules: [url],
    ...(mod.sim !== undefined ? { sim: mod.sim } : {}),
  };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === "object" || typeof v === "function") &&
    v !== null &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

/**
 * `value`, awaited: a graph that never comes once nothing is left to run is said,
 * where Node.js exited with code 13 (an unsettled top-level await) without a word.
 */
function untilSettled(value: unknown, file: string): Promise<unknown> {
  return unlessIdle(
    Promise.resolve(value),
    () =>
      new GraphInputError(
        `${file}: its graph never came: the promise it gave waits on what nothing is left to settle`,
      ),
  );
}

/**
 * Refuses a device or FIFO (a `graph.json` linked to /dev/zero was read forever,
 * a FIFO until a writer came), and a file that is missing, a directory or not
 * readable, saying so after `reading` ("cannot import").
 */
async function refuseNonRegular(file: string, reading: string): Promise<void> {
  const err = await regularFileSize(file).then(
    () => null,
    (e: unknown) => e,
  );
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "ENOTREGULAR") {
    throw new GraphInputError(`${file}: ${(err as Error).message}`);
  }
  // In words: Node's were "ENOENT: no such file or directory, open 'g.json'", or for a
  // module "Directory import '…' is not supported … imported from" weft's own source.
  const why = fileProblem(err);
  if (why !== null) throw new GraphInputError(`${file}: ${reading}: ${why}`);
}

/** The file name that stands for standard input: `weft run -`, as other commands read it. */
export const STDIN_FILE = "-";

/** What {@link loadGraphInput} reads for {@link STDIN_FILE}, and what it says before it waits on a terminal. */
export interface GraphStdin {
  readonly stream: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  /** Called before reading a terminal: a user who typed `-` by mistake sees why nothing happens. */
  readonly onTerminal?: () => void;
}

/**
 * Read `file` (`.json`, or a module `.ts`/`.mts`/`.js`/`.mjs`), or for `-`, a JSON
 * graph from `stdin` (default: this process's), its task modules relative to the
 * working directory, named `stdin` in errors.
 */
export async function loadGraphInput(
  file: string,
  stdin: GraphStdin = { stream: process.stdin },
): Promise<GraphInput> {
  if (file === STDIN_FILE) return fromStdin(stdin);
  const ext = extname(file).toLowerCase();
  const isModule = [".ts", ".mts", ".js", ".mjs"].includes(ext);
  if (ext !== ".json" && !isModule) {
    throw new GraphInputError(`${file}: expected a .json graph or a module (.ts, .mts, .js, .mjs)`);
  }
  await refuseNonRegular(file, isModule ? "cannot import" : "cannot read the graph");
  return isModule ? fromModule(file) : fromJson(file);
}

/** The most bytes of a graph on stdin: its text is one string, which holds no more. */
const MAX_STDIN_BYTES = bufferConstants.MAX_STRING_LENGTH;

/** The JSON graph on `stdin`, read to its end: a module cannot come this way (it is imported from a file). */
async function fromStdin(stdin: GraphStdin): Promise<GraphInput> {
  if (stdin.stream.isTTY === true) stdin.onTerminal?.();
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of stdin.stream) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
      bytes += b.length;
      // A stream with no end (`< /dev/zero`, `yes |`) was read until the process ran
      // out of memory: past what one string holds, no JSON.parse could take it anyway.
      if (bytes > MAX_STDIN_BYTES) {
        throw new GraphInputError(
          `stdin: cannot read the graph: more than the ${formatBytes(MAX_STDIN_BYTES)} one string holds`,
        );
      }
      chunks.push(b);
    }
  } catch (err) {
    if (err instanceof GraphInputError) throw err;
    throw new GraphInputError(`stdin: cannot read the graph: ${asError(err).message}`);
  }
  const text = textOf(Buffer.concat(chunks));
  // Said as what happened upstream (a generator that failed, a `<` of an empty file),
  // where JSON.parse said "Unexpected end of JSON input".
  if (text.trim() === "") {
    throw new GraphInputError(
      `stdin: no graph came: the input ${text === "" ? "was empty" : "held only whitespace"}`,
    );
  }
  return fromJsonText(text, "stdin", process.cwd());
}

/**
 * `value` made JSON-friendly: Maps become objects (or entry lists), Sets and typed
 * arrays lists, `ArrayBuffer`s and `DataView`s lists of their bytes, BigInts
 * strings, NaN, ±Infinity and -0 their names as strings (JSON would print null,
 * as for a missing value, and 0), regular expressions their source (`"/ab+c/gi"`),
 * boxed primitives their value, errors `"Name: message"`, and a reference back
 * to an enclosing value `"[Circular]"` (a task may return a cyclic value).
 */
export function jsonFriendly(value: unknown, enclosing: Set<object> = new Set()): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (Object.is(value, -0)) return "-0";
  if (value === undefined) return null;
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (value instanceof RegExp) return String(value);
  if (value instanceof ArrayBuffer) return Array.from(new Uint8Array(value));
  if (value instanceof DataView) {
    return Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  }
  if (
    value instanceof Number ||
    value instanceof String ||
    value instanceof Boolean ||
    value instanceof BigInt
  ) {
    return jsonFriendly(value.valueOf(), enclosing);
  }
  if (enclosing.has(value)) return "[Circular]";
  enclosing.add(value);
  try {
    const inner = (v: unknown): unknown => jsonFriendly(v, enclosing);
    if (value instanceof Map) {
      const entries = [...value.entries()].map(([k, v]) => [inner(k), inner(v)]);
      return entries.every(([k]) => typeof k === "string") ? Object.fromEntries(entries) : entries;
    }
    if (value instanceof Set) return [...value].map(inner);
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      return Array.from(value as unknown as ArrayLike<number | bigint>, inner);
    }
    if (Array.isArray(value)) return value.map(inner);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inner(v)]));
  } finally {
    enclosing.delete(value);
  }
}
