/**
 * Loader for the cluster dumps that dask/distributed 2023.7.0 writes with
 * `Client.dump_cluster_state()` (`distributed/cluster_dump.py`): the input of
 * `weft replay`, which rebuilds each worker's state machine from its dumped
 * stimulus log.
 *
 * # Encodings
 *
 * - `*.msgpack.gz` (Dask's default): gzip of `msgpack.pack(state)`. Tuples are
 *   msgpack arrays, `None` is nil, `inf` is a float64 infinity, integers above
 *   2**32 are uint64 (decoded as bigints, turned back into numbers when safe).
 * - `*.yaml`: `yaml.dump(_tuple_to_list(state))` by PyYAML: `null`, `.inf`,
 *   `true`/`false`, and strings that PyYAML's resolver would read as something
 *   else are quoted (plain scalars are typed here with PyYAML's resolver, which
 *   differs from YAML 1.1: `y`, `n`, `1e3` are strings). PyYAML sorts mapping keys,
 *   so the insertion order of Python dicts is lost in this format (lists keep
 *   their order). `*.msgpack` (not gzipped) and `*.yaml.gz`/`*.yml` are also read.
 *
 * In both, the state went through `recursive_to_dict` first: sets, tuples,
 * deques and dict views became lists (a set in Python's iteration order of the
 * live run), objects without `_to_dict` became their `repr()` (`"<Status.running:
 * 'running'>"`, `"<TaskState 'x' memory>"`, `"<Serialize: b'…'>"`), and a dict key
 * that was a tuple became a list, unhashable, so it was stored as `str(list)`:
 * the tuple key `('x', 1)` is the string key `"['x', 1]"` in both encodings,
 * while the same key in a value position (an event's `key`, a log entry) is the
 * list `['x', 1]`.
 *
 * # Normalization
 *
 * The loader turns every encoding into the same tree of plain values
 * ({@link DumpValue}): mappings become plain objects with string keys, in the
 * file's order (JS puts integer-like keys first, as `JSON.parse` does for the
 * conformance vectors); bigints within ±(2**53-1) become numbers. Task keys are
 * strings as Python's `str()` writes them, as in the conformance vectors: a
 * non-string mapping key (a msgpack array or number, a YAML complex key) becomes
 * `str()` of its Python value (`('x', 1)` → `"('x', 1)"`), a string mapping key
 * holding `str()` of a list (`"['x', 1]"`, see above) becomes the tuple form
 * `"('x', 1)"`, and a task key in a value position (events' `key`/`keys`, log
 * entries, the worker's key lists, tasks' `key`) becomes its `str()` form too.
 * Caveat: an integral float key prints as an int (`2`, not `2.0`), since both
 * decode to the same JS number.
 *
 * # Structure (as found in the dumps of /work/shared/dumps)
 *
 * Top level: `{scheduler, workers, versions}`.
 *
 * - `versions`: `{scheduler: {host, packages}, workers: {address: {host, packages}}}`
 *   (`packages.distributed` is `"2023.7.0"`).
 * - `scheduler` (`Scheduler._to_dict`): `type, id, address, services, started,
 *   workers, status, thread_id, transition_log, transition_counter, tasks,
 *   task_groups, clients, memory, events, extensions`. `transition_log` entries
 *   are `[key, start, finish, recommendations {key: state}, stimulus_id, time]`;
 *   `workers` maps an address to the scheduler's WorkerState dict (`nthreads`,
 *   `memory_limit`, `resources`, `status`, `has_what` as TaskState reprs…);
 *   `tasks` maps a key to the scheduler's TaskState dict (every field, with
 *   `null`s; references to other tasks and workers are reprs).
 * - `workers` maps an address to `Worker._to_dict()` — or to a string when
 *   the worker did not answer (the `repr` of the error; reported in
 *   {@link ClusterDump.unavailableWorkers}). Its keys: `type` ("Worker"),
 *   `id`, `scheduler`, `nthreads`, `memory_limit` (bytes or `null`), `address`,
 *   `status` (`"<Status.running: 'running'>"`), `thread_id`, `logs` (`[level,
 *   message]` pairs), `config` (the whole `dask.config.config`), `transfer_incoming_log`,
 *   `transfer_outgoing_log`, then `WorkerState._to_dict()`: `running`, `ready`,
 *   `constrained` (keys in pop order), `data` (`{key: null}`), `data_needed`
 *   (`{worker: [keys]}`), `executing`, `has_what` (`{worker: [keys]}`),
 *   `long_running`, `in_flight_tasks`, `in_flight_workers` (`{worker: [keys]}`),
 *   `missing_dep_flight`, `busy_workers`, `log`, `stimulus_log`,
 *   `transition_counter`, `tasks`, `task_counts` and `task_cumulative_elapsed`
 *   (keyed by `"['prefix', 'state']"`, normalized to `"('prefix', 'state')"`),
 *   then the memory manager's `memory_target_fraction`, `memory_spill_fraction`,
 *   `memory_pause_fraction`, `max_spill`, `memory_monitor_interval`. The
 *   dump holds no resources, transfer limits or `validate` of the WorkerState:
 *   {@link workerStateParameters} derives them the way `Worker.__init__` does.
 * - `stimulus_log` (a deque of at most 10,000): events as
 *   `StateMachineEvent._to_dict` writes them, `cls` then every public attribute
 *   in alphabetical order (`handled` — when it was handled — and `stimulus_id`
 *   included), after `to_loggable`: `ComputeTaskEvent` with `run_spec`,
 *   `function`, `args`, `kwargs` null, `who_has {key: [workers]}`, `nbytes {key:
 *   n}`, `priority [ints]`, `resource_restrictions`, `annotations`, `actor`,
 *   `duration`, `run_id`, `span_id`; `ExecuteSuccessEvent` with `value` null and
 *   `type` as `str(type)` (`"<class 'list'>"`, see {@link typeNameFromRepr});
 *   `ExecuteFailureEvent` with `exception`/`traceback` as `"<Serialize: …>"`
 *   reprs and `exception_text`/`traceback_text`; `GatherDepSuccessEvent` and
 *   `UpdateDataEvent` with `data {key: null}`; `FreeKeysEvent`/`RemoveReplicasEvent`
 *   with `keys`; `RemoveWorkerEvent`, `GatherDepNetworkFailureEvent` with
 *   `worker` (and `total_nbytes`). `FindMissingEvent`s are never logged.
 * - `log` (a deque of at most 100,000): tuples, now lists, of these shapes
 *   (see {@link classifyLogEntry}): `[key, start, recommended, final, {key:
 *   state}, stimulus_id, time]` (a transition); `[key, "compute-task" |
 *   "ensure-task-exists" | "receive-from-scatter", state, stimulus_id, time]`;
 *   `[key, "put-in-memory" | "remove-replica" | "missing-dep" | "cancel-compute",
 *   stimulus_id, time]`; `["free-keys", [keys], stimulus_id, time]`;
 *   `["gather-dependencies" | "request-dep" | "receive-dep" | "gather-dep-failed"
 *   | "busy-gather", worker, [keys], stimulus_id, time]` (the last four are
 *   written by the Worker, not the WorkerState).
 * - `tasks`: `{key: TaskState._to_dict_no_nest()}`, which drops every falsy
 *   field (`None`, `0`, `False`, `""`, empty containers) and `prefix`: an absent
 *   field means "falsy" (an absent `run_id` is 0, an absent `done` is false).
 *   Fields: `key, state, previous, next, done, priority, nbytes, run_id,
 *   duration, who_has, coming_from, dependencies, dependents, waiting_for_data,
 *   waiters` (task references as `"<TaskState 'key' state>"` reprs),
 *   `resource_restrictions, exception, traceback, exception_text,
 *   traceback_text, start_time, stop_time, startstops, span_id, annotations, …`.
 *
 * The `.yaml` and `.msgpack.gz` of the `shuffle` run are two dumps of the same
 * cluster taken at different moments, not one dump in two encodings: the YAML
 * one was written later (after the client released its keys: 157/169/135 more
 * `FreeKeysEvent`s, larger transition counters, no tasks left). The earlier
 * dump's stimulus logs and logs are exact prefixes of the later one's, and the
 * loader yields equal normalized values for them.
 */

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { Unpackr } from "msgpackr";
import type { ScalarTag } from "yaml";
import { parseDocument } from "yaml";
import { parseBytes } from "../util/parseBytes.ts";

// ---------------------------------------------------------------------------
// Values and errors
// ---------------------------------------------------------------------------

/**
 * A normalized dump value: what Python's `recursive_to_dict` output becomes
 * once decoded (see the module comment). `bigint` only for integers beyond
 * ±(2**53-1); `Uint8Array` only for raw bytes, which Dask's dumps do not hold.
 */
export type DumpValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | DumpList
  | DumpObject;

/** A normalized list (a Python list, tuple, set or deque). */
export type DumpList = DumpValue[];

/** A normalized mapping: string keys (Python `str()` of the original keys). */
export interface DumpObject {
  [key: string]: DumpValue;
}

/**
 * Thrown for any dump that cannot be read: an unreadable file, an unknown
 * extension, truncated or corrupt gzip, data that is not msgpack/YAML, or a
 * structure that is not a cluster dump. The message names the file and, when
 * the problem is inside the data, the path of the bad field, e.g.
 * `dump.msgpack.gz: workers["tcp://127.0.0.1:1234"].stimulus_log[3]: expected an object, got null`.
 */
export class DumpFormatError extends Error {
  override readonly name = "DumpFormatError";
  /** The file (or the source label given to {@link parseClusterDump}). */
  readonly file: string;
  /** Path of the bad field inside the dump, or null for file-level problems. */
  readonly path: string | null;
  /** What is wrong, without the file and path. */
  readonly reason: string;

  /** Builds the error; `options.cause` keeps the underlying error when there is one. */
  constructor(file: string, path: string | null, reason: string, options?: { cause?: unknown }) {
    super(`${file}: ${path ? `${path}: ` : ""}${reason}`, options);
    this.file = file;
    this.path = path;
    this.reason = reason;
  }
}

/** A path inside the dump, built lazily (rendered only for error messages). */
interface PathNode {
  readonly parent: PathNode | null;
  /** A mapping key, a list index, or an already rendered prefix. */
  readonly seg: string | number | { readonly rendered: string };
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function child(parent: PathNode | null, seg: PathNode["seg"]): PathNode {
  return { parent, seg };
}

/** Renders a path as `workers["tcp://…"].stimulus_log[3].key`. */
function renderPath(path: PathNode | null): string {
  const segs: PathNode["seg"][] = [];
  for (let p = path; p; p = p.parent) segs.push(p.seg);
  segs.reverse();
  let out = "";
  for (const seg of segs) {
    if (typeof seg === "object") out += seg.rendered;
    else if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENTIFIER.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** A short description of a value for error messages. */
function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") {
    const s = v.length > 40 ? `${v.slice(0, 40)}…` : v;
    return `a string (${JSON.stringify(s)})`;
  }
  if (typeof v === "number") return `the number ${String(v)}`;
  // Integers beyond 2**53 stay bigints (see normalizeTree): where a number is expected,
  // "expected a number, got the number N" would read as a contradiction.
  if (typeof v === "bigint") return `the integer ${String(v)}, beyond 2**53`;
  if (typeof v === "boolean") return `the boolean ${String(v)}`;
  if (Array.isArray(v)) return `a list of ${v.length} item${v.length === 1 ? "" : "s"}`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (typeof v === "object") return "an object";
  return typeof v;
}

/** Error reporting bound to one file. */
class Ctx {
  constructor(readonly file: string) {}

  fail(path: PathNode | null, reason: string, cause?: unknown): never {
    const rendered = renderPath(path);
    throw new DumpFormatError(
      this.file,
      rendered || null,
      reason,
      cause === undefined ? undefined : { cause },
    );
  }

  object(v: DumpValue | undefined, path: PathNode | null): DumpObject {
    if (isDumpObject(v)) return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected an object)" : `expected an object, got ${describe(v)}`,
    );
  }

  list(v: DumpValue | undefined, path: PathNode | null): DumpList {
    if (Array.isArray(v)) return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a list)" : `expected a list, got ${describe(v)}`,
    );
  }

  string(v: DumpValue | undefined, path: PathNode | null): string {
    if (typeof v === "string") return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a string)" : `expected a string, got ${describe(v)}`,
    );
  }

  number(v: DumpValue | undefined, path: PathNode | null): number {
    if (typeof v === "number") return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a number)" : `expected a number, got ${describe(v)}`,
    );
  }

  optionalNumber(v: DumpValue | undefined, path: PathNode | null): number | null {
    if (v === undefined || v === null) return null;
    return this.number(v, path);
  }

  optionalString(v: DumpValue | undefined, path: PathNode | null): string | null {
    if (v === undefined || v === null) return null;
    return this.string(v, path);
  }

  optionalBoolean(v: DumpValue | undefined, path: PathNode | null): boolean | null {
    if (v === undefined || v === null) return null;
    if (typeof v === "boolean") return v;
    return this.fail(path, `expected a boolean, got ${describe(v)}`);
  }
}

/** True for a normalized mapping (not a list, bytes or scalar). */
export function isDumpObject(v: DumpValue | undefined): v is DumpObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function setProp(obj: DumpObject, key: string, value: DumpValue): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}

// ---------------------------------------------------------------------------
// Python str()/repr() of keys
// ---------------------------------------------------------------------------

const NON_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/** Python's `repr(str)`. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp === 0x20 || (cp > 0x20 && cp < 0x7f)) out += ch;
    else if (cp >= 0x7f && !NON_PRINTABLE.test(ch)) out += ch;
    else if (cp <= 0xff) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return out + quote;
}

/** Python's `repr(float)`/`repr(int)` for a JS number (integral values print as ints). */
function pyNumberRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (n === Number.POSITIVE_INFINITY) return "inf";
  if (n === Number.NEGATIVE_INFINITY) return "-inf";
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n === 0 ? 0 : n);
  const [mantissa, expText] = n.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(n);
}

/** Python's `repr(bytes)`. */
function pyBytesRepr(b: Uint8Array): string {
  const hasSingle = b.includes(0x27);
  const quote = hasSingle && !b.includes(0x22) ? '"' : "'";
  let out = `b${quote}`;
  for (const c of b) {
    if (c === 0x5c) out += "\\\\";
    else if (String.fromCharCode(c) === quote) out += `\\${quote}`;
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += `\\x${c.toString(16).padStart(2, "0")}`;
  }
  return out + quote;
}

/** Python's `repr()` of a decoded scalar or tuple (a list stands for a tuple); null if not representable. */
function pyRepr(v: unknown): string | null {
  if (v === null || v === undefined) return "None";
  if (typeof v === "string") return pyStrRepr(v);
  if (typeof v === "number") return pyNumberRepr(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "boolean") return v ? "True" : "False";
  if (v instanceof Uint8Array) return pyBytesRepr(v);
  if (Array.isArray(v)) {
    const items: string[] = [];
    for (const item of v) {
      const r = pyRepr(item);
      if (r === null) return null;
      items.push(r);
    }
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
  }
  return null;
}

/** Python's `str()` of a decoded key: strings as they are, everything else as `repr()`. */
function pyStr(v: unknown): string | null {
  return typeof v === "string" ? v : pyRepr(v);
}

/** End index (exclusive) of the Python string literal starting at `i`, or -1. */
function scanPyStringLiteral(s: string, i: number): number {
  const quote = s[i];
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === "\\") j++;
    else if (s[j] === quote) return j + 1;
  }
  return -1;
}

const LIST_LITERAL_CHAR = /[A-Za-z0-9_.+\- ]/;

/**
 * `str()` of a list of scalars (possibly nested) rewritten as `str()` of the
 * tuple it came from: `"['x', 1]"` → `"('x', 1)"`, `"['x']"` → `"('x',)"`.
 * Null when `s` is not such a list literal.
 */
export function listReprToTupleRepr(s: string): string | null {
  if (s.length < 2 || s[0] !== "[" || s[s.length - 1] !== "]") return null;
  let out = "";
  const commas: number[] = [];
  const nonEmpty: boolean[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    const depth = commas.length;
    if (c === "'" || c === '"') {
      if (depth === 0) return null;
      const end = scanPyStringLiteral(s, i);
      if (end < 0) return null;
      out += s.slice(i, end);
      nonEmpty[depth - 1] = true;
      i = end;
    } else if (c === "[") {
      if (depth === 0 && i !== 0) return null;
      if (depth > 0) nonEmpty[depth - 1] = true;
      commas.push(0);
      nonEmpty.push(false);
      out += "(";
      i++;
    } else if (c === "]") {
      if (depth === 0) return null;
      const n = commas.pop() ?? 0;
      const filled = nonEmpty.pop() ?? false;
      out += filled && n === 0 ? ",)" : ")";
      i++;
      if (commas.length === 0 && i !== s.length) return null;
    } else if (c === ",") {
      if (depth === 0) return null;
      commas[depth - 1]++;
      out += c;
      i++;
    } else if (LIST_LITERAL_CHAR.test(c)) {
      if (depth === 0) return null;
      if (c !== " ") nonEmpty[depth - 1] = true;
      out += c;
      i++;
    } else {
      return null;
    }
  }
  return commas.length === 0 ? out : null;
}

/** Parses a Python `repr(str)` literal; null if `lit` is not one. */
export function parsePyStrLiteral(lit: string): string | null {
  const quote = lit[0];
  if ((quote !== "'" && quote !== '"') || lit.length < 2 || lit[lit.length - 1] !== quote) {
    return null;
  }
  let out = "";
  const end = lit.length - 1;
  for (let i = 1; i < end; i++) {
    const c = lit[i];
    if (c === quote) return null;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = lit[++i];
    const hex = (n: number): number | null => {
      const digits = lit.slice(i + 1, i + 1 + n);
      if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits)) return null;
      i += n;
      return Number.parseInt(digits, 16);
    };
    let cp: number | null = null;
    if (e === "\\" || e === "'" || e === '"') out += e;
    else if (e === "n") out += "\n";
    else if (e === "r") out += "\r";
    else if (e === "t") out += "\t";
    else if (e === "x") cp = hex(2);
    else if (e === "u") cp = hex(4);
    else if (e === "U") cp = hex(8);
    else return null;
    if (e === "x" || e === "u" || e === "U") {
      if (cp === null || cp > 0x10ffff) return null;
      out += String.fromCodePoint(cp);
    }
  }
  return out;
}

const TASK_STATE_REPR = /^<TaskState (.+) ([^ >]+)>$/s;

/** A task referenced from another task (`"<TaskState 'key' state>"` in the dump). */
export interface TaskRef {
  /** The key, as Python's `str()` writes it. */
  readonly key: string;
  /** The referenced task's state when the dump was taken. */
  readonly state: string;
}

/**
 * Parses `repr(TaskState)` (`"<TaskState 'x-1' memory>"`, `"<TaskState ('x', 1) memory>"`);
 * null if `s` is not one.
 */
export function parseTaskStateRepr(s: string): TaskRef | null {
  const m = TASK_STATE_REPR.exec(s);
  if (!m) return null;
  const keyRepr = m[1];
  const key =
    keyRepr.startsWith("'") || keyRepr.startsWith('"') ? parsePyStrLiteral(keyRepr) : keyRepr;
  return key === null ? null : { key, state: m[2] };
}

/**
 * The type name in `str(type)` as ExecuteSuccessEvent dumps it: `"<class
 * 'list'>"` → `"list"`, `"<class 'numpy.ndarray'>"` → `"numpy.ndarray"` (what
 * `dask.utils.typename` gives). `"None"` → null; other strings are returned as they are.
 */
export function typeNameFromRepr(repr: string): string | null {
  if (repr === "None") return null;
  const m = /^<class '(.*)'>$/s.exec(repr);
  return m ? m[1] : repr;
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/** How a dump file is encoded. */
export type DumpEncoding = "msgpack" | "msgpack.gz" | "yaml" | "yaml.gz";

const SUPPORTED_EXTENSIONS = ".msgpack.gz, .msgpack, .yaml, .yml, .yaml.gz or .yml.gz";

/** The encoding implied by a file name's extension, or null when it is not a dump extension. */
export function dumpEncodingOf(fileName: string): DumpEncoding | null {
  const name = fileName.toLowerCase();
  if (name.endsWith(".msgpack.gz")) return "msgpack.gz";
  if (name.endsWith(".msgpack")) return "msgpack";
  if (name.endsWith(".yaml.gz") || name.endsWith(".yml.gz")) return "yaml.gz";
  if (name.endsWith(".yaml") || name.endsWith(".yml")) return "yaml";
  return null;
}

/** A hint at what non-dump content looks like, for error messages. */
function sniff(data: Uint8Array): string {
  const head = data.subarray(0, 16);
  const text = Buffer.from(head).toString("latin1");
  if (/^\s*[[{]/.test(text)) return "it looks like JSON text";
  if (/^[\x20-\x7e\t\r\n]+$/.test(text)) return `it starts with the text ${JSON.stringify(text)}`;
  return `it starts with the bytes ${Buffer.from(head.subarray(0, 8)).toString("hex")}`;
}

function gunzip(data: Uint8Array, ctx: Ctx, encoding: DumpEncoding): Uint8Array {
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) {
    ctx.fail(null, `not gzip data, as a ${encoding} file must be (${sniff(data)})`);
  }
  let out: Buffer;
  try {
    out = gunzipSync(data);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const msg = e instanceof Error ? e.message : String(e);
    if (code === "Z_BUF_ERROR")
      ctx.fail(null, "truncated gzip data (the compressed stream ends early)", e);
    if (code === "Z_DATA_ERROR") ctx.fail(null, `corrupt gzip data (${msg})`, e);
    ctx.fail(null, `cannot decompress the gzip data (${msg})`, e);
  }
  if (out.length === 0) ctx.fail(null, "the gzip stream holds no data");
  return out;
}

function decodeMsgpack(data: Uint8Array, ctx: Ctx): unknown {
  const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false, int64AsType: "bigint" });
  try {
    return unpackr.unpack(data);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/unexpected end/i.test(msg)) {
      return ctx.fail(null, "truncated msgpack data (the data ends inside a value)", e);
    }
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

/** Applies a leading sign of a PyYAML number literal. */
function splitSign(text: string): [sign: 1 | -1, digits: string] {
  if (text.startsWith("-")) return [-1, text.slice(1)];
  if (text.startsWith("+")) return [1, text.slice(1)];
  return [1, text];
}

/**
 * The implicit scalar types of PyYAML's `Resolver` (with its constructors),
 * which PyYAML's dumper relies on: it quotes every string that would read as
 * one of them, and only those. They differ from YAML 1.1 as the `yaml`
 * package implements it: PyYAML reads `y`, `n`, `1e3` as strings.
 */
const PYYAML_SCALARS: ScalarTag[] = [
  {
    tag: "tag:yaml.org,2002:null",
    default: true,
    test: /^(?:~|null|Null|NULL)?$/,
    resolve: () => null,
  },
  {
    tag: "tag:yaml.org,2002:bool",
    default: true,
    test: /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
    resolve: (s) => /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(s),
  },
  {
    tag: "tag:yaml.org,2002:int",
    default: true,
    test: /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
    resolve: (s, onError) => {
      const [sign, v] = splitSign(s.replaceAll("_", ""));
      try {
        let n: bigint;
        if (v.includes(":")) n = v.split(":").reduce((acc, part) => acc * 60n + BigInt(part), 0n);
        else if (v.startsWith("0b") || v.startsWith("0x") || v === "0") n = BigInt(v);
        else if (v.startsWith("0")) n = BigInt(`0o${v.slice(1)}`);
        else n = BigInt(v);
        return sign < 0 ? -n : n;
      } catch {
        onError(`invalid integer ${JSON.stringify(s)}`);
        return s;
      }
    },
  },
  {
    tag: "tag:yaml.org,2002:float",
    default: true,
    test: /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
    resolve: (s) => {
      const [sign, v] = splitSign(s.replaceAll("_", "").toLowerCase());
      if (v === ".inf") return sign * Number.POSITIVE_INFINITY;
      if (v === ".nan") return Number.NaN;
      if (v.includes(":"))
        return sign * v.split(":").reduce((acc, part) => acc * 60 + Number(part), 0);
      return sign * Number(v);
    },
  },
];

function decodeYaml(data: Uint8Array, ctx: Ctx): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch (e) {
    return ctx.fail(null, `not YAML: the file is not UTF-8 text (${sniff(data)})`, e);
  }
  try {
    // Plain scalars are typed as PyYAML types them; integers may exceed 2**53.
    const doc = parseDocument(text, {
      schema: "failsafe",
      customTags: [...PYYAML_SCALARS, "binary"],
      prettyErrors: true,
    });
    if (doc.errors.length > 0) {
      // The first line ends with a colon introducing the code frame, which is left out.
      const first = doc.errors[0].message.split("\n")[0].replace(/:\s*$/, "");
      const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more errors)` : "";
      return ctx.fail(null, `invalid YAML: ${first}${more}`, doc.errors[0]);
    }
    return doc.toJS({ mapAsMap: true, maxAliasCount: -1 });
  } catch (e) {
    if (e instanceof DumpFormatError) throw e;
    return ctx.fail(null, `invalid YAML (${e instanceof Error ? e.message : String(e)})`, e);
  }
}

// ---------------------------------------------------------------------------
// Generic normalization
// ---------------------------------------------------------------------------

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function normalizeMapKey(k: unknown, path: PathNode | null, ctx: Ctx): string {
  if (typeof k === "string") return listReprToTupleRepr(k) ?? k;
  const s = pyStr(k);
  if (s === null) ctx.fail(path, `unsupported mapping key: ${describe(k)}`);
  return s;
}

/**
 * The deepest nesting of lists and mappings accepted. Dask's dumps nest about a dozen
 * levels; a corrupt or hand-made one can nest thousands, and then the recursive code
 * downstream (record formatting, story JSON) overflows the stack with a raw trace.
 */
const MAX_NESTING = 1000;

/** Fails for a value nested deeper than {@link MAX_NESTING}, at `depth` below the root. */
function tooDeep(path: PathNode | null, depth: number, ctx: Ctx): never {
  // The full path would be a thousand `[0]`s: name a shallow ancestor instead.
  let p = path;
  for (let i = 0; i < depth - 10 && p !== null; i++) p = p.parent;
  return ctx.fail(p, `holds values nested more than ${MAX_NESTING} levels deep`);
}

function normalizeEntries(
  entries: Iterable<[unknown, unknown]>,
  path: PathNode | null,
  ctx: Ctx,
  depth: number,
): DumpObject {
  const out: DumpObject = {};
  for (const [k, v] of entries) {
    const key = normalizeMapKey(k, path, ctx);
    if (Object.hasOwn(out, key)) ctx.fail(path, `two keys both read as ${JSON.stringify(key)}`);
    setProp(out, key, normalizeTree(v, child(path, key), ctx, depth + 1));
  }
  return out;
}

function normalizeTree(v: unknown, path: PathNode | null, ctx: Ctx, depth = 0): DumpValue {
  switch (typeof v) {
    case "string":
    case "boolean":
    case "number":
      return v;
    case "bigint":
      return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v;
    case "undefined":
      return null;
    default:
      break;
  }
  if (v === null) return null;
  if (depth > MAX_NESTING && (Array.isArray(v) || typeof v === "object")) {
    return tooDeep(path, depth, ctx);
  }
  if (Array.isArray(v)) {
    const out: DumpList = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      out[i] = normalizeTree(v[i], child(path, i), ctx, depth + 1);
    }
    return out;
  }
  if (v instanceof Map) return normalizeEntries(v.entries(), path, ctx, depth);
  if (v instanceof Uint8Array) return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    return normalizeEntries(Object.entries(v), path, ctx, depth);
  }
  const what = typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v;
  return ctx.fail(path, `unsupported value (${what})`);
}

/** A task key in a value position (a string, or a list standing for a tuple) as its `str()`. */
function keyString(v: DumpValue | undefined, path: PathNode | null, ctx: Ctx): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null || isDumpObject(v)) {
    return ctx.fail(
      path,
      v === undefined ? "missing (expected a task key)" : `expected a task key, got ${describe(v)}`,
    );
  }
  const s = pyStr(v);
  if (s === null) return ctx.fail(path, `expected a task key, got ${describe(v)}`);
  return s;
}

function keyList(v: DumpValue | undefined, path: PathNode | null, ctx: Ctx): string[] {
  const list = ctx.list(v, path);
  return list.map((k, i) => keyString(k, child(path, i), ctx));
}

function keyListsByWorker(
  v: DumpValue | undefined,
  path: PathNode | null,
  ctx: Ctx,
): Record<string, string[]> {
  const obj = ctx.object(v, path);
  const out: Record<string, string[]> = {};
  for (const [w, keys] of Object.entries(obj)) {
    const list = keyList(keys, child(path, w), ctx);
    obj[w] = list;
    out[w] = list;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

/**
 * A stimulus as the dump records it: Dask's dict form of a `StateMachineEvent`
 * (`cls`, `stimulus_id`, `handled`, then every field under its Python name),
 * normalized: `key` and `keys` are `str()` key strings; `handled` is null when absent.
 */
export interface DumpEvent extends DumpObject {
  /** The Python class name, e.g. `"ComputeTaskEvent"`. */
  cls: string;
  /** The stimulus id. */
  stimulus_id: string;
  /** When the worker handled it (`time()`), or null. */
  handled: number | null;
}

/** Fields each known event class must have in a dump (besides `cls`, `stimulus_id`). */
export const EVENT_REQUIRED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  PauseEvent: [],
  UnpauseEvent: [],
  FindMissingEvent: [],
  RetryBusyWorkerEvent: ["worker"],
  GatherDepSuccessEvent: ["worker", "total_nbytes", "data"],
  GatherDepBusyEvent: ["worker", "total_nbytes"],
  GatherDepNetworkFailureEvent: ["worker", "total_nbytes"],
  GatherDepFailureEvent: ["worker", "total_nbytes", "exception_text", "traceback_text"],
  RemoveWorkerEvent: ["worker"],
  ComputeTaskEvent: [
    "key",
    "run_id",
    "who_has",
    "nbytes",
    "priority",
    "duration",
    "resource_restrictions",
    "actor",
    "annotations",
  ],
  ExecuteSuccessEvent: ["key", "run_id", "start", "stop", "nbytes"],
  ExecuteFailureEvent: ["key", "run_id", "exception_text", "traceback_text"],
  RescheduleEvent: ["key"],
  CancelComputeEvent: ["key"],
  RefreshWhoHasEvent: ["who_has"],
  AcquireReplicasEvent: ["who_has", "nbytes"],
  RemoveReplicasEvent: ["keys"],
  FreeKeysEvent: ["keys"],
  StealRequestEvent: ["key"],
  UpdateDataEvent: ["data"],
  SecedeEvent: ["key", "compute_duration"],
};

function normalizeEvent(v: DumpValue, path: PathNode, ctx: Ctx): DumpEvent {
  const ev = ctx.object(v, path);
  const cls = ctx.string(ev.cls, child(path, "cls"));
  ctx.string(ev.stimulus_id, child(path, "stimulus_id"));
  ev.handled = ctx.optionalNumber(ev.handled, child(path, "handled"));
  for (const field of EVENT_REQUIRED_FIELDS[cls] ?? []) {
    if (!Object.hasOwn(ev, field)) ctx.fail(child(path, field), `missing (a ${cls} has it)`);
  }
  if (Object.hasOwn(ev, "key")) ev.key = keyString(ev.key, child(path, "key"), ctx);
  if (Object.hasOwn(ev, "keys")) ev.keys = keyList(ev.keys, child(path, "keys"), ctx);
  if (Object.hasOwn(ev, "who_has")) {
    const p = child(path, "who_has");
    for (const [k, workers] of Object.entries(ctx.object(ev.who_has, p))) {
      const list = ctx.list(workers, child(p, k));
      list.forEach((w, i) => {
        ctx.string(w, child(child(p, k), i));
      });
    }
  }
  if (Object.hasOwn(ev, "nbytes")) {
    const p = child(path, "nbytes");
    if (isDumpObject(ev.nbytes)) {
      for (const [k, n] of Object.entries(ev.nbytes)) ctx.number(n, child(p, k));
    } else if (ev.nbytes !== null) {
      ctx.number(ev.nbytes, p);
    }
  }
  if (Object.hasOwn(ev, "data")) ctx.object(ev.data, child(path, "data"));
  if (Object.hasOwn(ev, "priority") && ev.priority !== null) {
    const p = child(path, "priority");
    ctx.list(ev.priority, p).forEach((n, i) => {
      ctx.number(n, child(p, i));
    });
  }
  for (const field of ["worker"] as const) {
    if (Object.hasOwn(ev, field)) ctx.string(ev[field], child(path, field));
  }
  for (const field of ["run_id", "total_nbytes"] as const) {
    if (Object.hasOwn(ev, field)) ctx.number(ev[field], child(path, field));
  }
  return ev as DumpEvent;
}

// ---------------------------------------------------------------------------
// Log entries
// ---------------------------------------------------------------------------

/** A worker log entry: one of the tuples of `WorkerState.log` (see {@link classifyLogEntry}). */
export type WorkerLogEntry = readonly DumpValue[];

/** Log entries that start with a tag and a worker address, then keys: written by the Worker. */
export const WORKER_LOG_TAGS: ReadonlySet<string> = new Set([
  "gather-dependencies",
  "request-dep",
  "receive-dep",
  "gather-dep-failed",
  "busy-gather",
]);

/** A classified worker log entry. */
export type WorkerLogRecord =
  | {
      /** `[key, start, recommended, final, {key: state}, stimulus_id, time]` */
      readonly kind: "transition";
      readonly key: string;
      readonly start: string;
      readonly recommended: string;
      readonly final: string;
      readonly recommendations: Readonly<Record<string, string>>;
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `[key, action, state, stimulus_id, time]` (compute-task, ensure-task-exists,
       * receive-from-scatter) or `[key, action, stimulus_id, time]` (put-in-memory,
       * remove-replica, missing-dep, cancel-compute; `state` null). */
      readonly kind: "task";
      readonly key: string;
      readonly action: string;
      readonly state: string | null;
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `["free-keys", [keys], stimulus_id, time]` */
      readonly kind: "free-keys";
      readonly keys: readonly string[];
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** `[tag, worker, [keys], stimulus_id, time]` for the {@link WORKER_LOG_TAGS} */
      readonly kind: "worker";
      readonly action: string;
      readonly worker: string;
      readonly keys: readonly string[];
      readonly stimulusId: string;
      readonly time: number;
    }
  | {
      /** Any other shape. */
      readonly kind: "other";
      readonly entry: WorkerLogEntry;
    };

type LogShape = "transition" | "task5" | "task4" | "free-keys" | "worker" | "other";

function logShape(e: readonly DumpValue[]): LogShape {
  if (e.length === 7 && isDumpObject(e[4])) return "transition";
  if (
    e.length === 5 &&
    typeof e[0] === "string" &&
    WORKER_LOG_TAGS.has(e[0]) &&
    Array.isArray(e[2])
  ) {
    return "worker";
  }
  if (e.length === 4 && e[0] === "free-keys" && Array.isArray(e[1])) return "free-keys";
  if (e.length === 5 && typeof e[1] === "string") return "task5";
  if (e.length === 4 && typeof e[1] === "string") return "task4";
  return "other";
}

function normalizeLogEntry(v: DumpValue, path: PathNode, ctx: Ctx): WorkerLogEntry {
  const e = ctx.list(v, path);
  switch (logShape(e)) {
    case "transition":
    case "task5":
    case "task4":
      e[0] = keyString(e[0], child(path, 0), ctx);
      break;
    case "free-keys":
      e[1] = keyList(e[1], child(path, 1), ctx);
      break;
    case "worker":
      e[2] = keyList(e[2], child(path, 2), ctx);
      break;
    default:
      break;
  }
  return e;
}

/** Reads a worker log entry as a typed record; entries of unexpected shape are `"other"`. */
export function classifyLogEntry(entry: WorkerLogEntry): WorkerLogRecord {
  const e = entry;
  const str = (v: DumpValue | undefined): v is string => typeof v === "string";
  const num = (v: DumpValue | undefined): v is number => typeof v === "number";
  const strings = (v: DumpValue | undefined): v is string[] => Array.isArray(v) && v.every(str);
  switch (logShape(e)) {
    case "transition": {
      const recs = e[4];
      if (
        str(e[0]) &&
        str(e[1]) &&
        str(e[2]) &&
        str(e[3]) &&
        isDumpObject(recs) &&
        Object.values(recs).every(str) &&
        str(e[5]) &&
        num(e[6])
      ) {
        const recommendations = recs as Record<string, string>;
        return {
          kind: "transition",
          key: e[0],
          start: e[1],
          recommended: e[2],
          final: e[3],
          recommendations,
          stimulusId: e[5],
          time: e[6],
        };
      }
      break;
    }
    case "task5":
      if (str(e[0]) && str(e[1]) && (str(e[2]) || e[2] === null) && str(e[3]) && num(e[4])) {
        return { kind: "task", key: e[0], action: e[1], state: e[2], stimulusId: e[3], time: e[4] };
      }
      break;
    case "task4":
      if (str(e[0]) && str(e[1]) && str(e[2]) && num(e[3])) {
        return { kind: "task", key: e[0], action: e[1], state: null, stimulusId: e[2], time: e[3] };
      }
      break;
    case "free-keys":
      if (strings(e[1]) && str(e[2]) && num(e[3])) {
        return { kind: "free-keys", keys: e[1], stimulusId: e[2], time: e[3] };
      }
      break;
    case "worker":
      if (str(e[0]) && str(e[1]) && strings(e[2]) && str(e[3]) && num(e[4])) {
        return {
          kind: "worker",
          action: e[0],
          worker: e[1],
          keys: e[2],
          stimulusId: e[3],
          time: e[4],
        };
      }
      break;
    default:
      break;
  }
  return { kind: "other", entry };
}

// ---------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------

/**
 * A worker's task as dumped (`TaskState._to_dict_no_nest`, falsy fields
 * dropped), with typed access. Absent fields read as their falsy value.
 */
export interface DumpTask {
  /** The key (`str()` form). */
  readonly key: string;
  /** `released`, `waiting`, `ready`, `executing`, `memory`, `error`, `fetch`, `flight`, … */
  readonly state: string;
  /** `previous` of cancelled/resumed tasks, else null. */
  readonly previous: string | null;
  /** `next` of resumed tasks, else null. */
  readonly next: string | null;
  /** Whether the task's execution or transfer completed. */
  readonly done: boolean;
  /** The priority tuple, or null. */
  readonly priority: readonly number[] | null;
  /** Size in bytes, or null (unknown, or 0). */
  readonly nbytes: number | null;
  /** The run id (an absent `run_id` is 0: Dask's sentinel -1 is truthy and kept). */
  readonly runId: number;
  /** Tasks this one depends on. */
  readonly dependencies: readonly TaskRef[];
  /** Tasks depending on this one. */
  readonly dependents: readonly TaskRef[];
  /** Dependencies not in memory yet. */
  readonly waitingForData: readonly TaskRef[];
  /** Tasks waiting for this one. */
  readonly waiters: readonly TaskRef[];
  /** Workers known to hold the task's data. */
  readonly whoHas: readonly string[];
  /** The worker it is being fetched from, or null. */
  readonly comingFrom: string | null;
  /** `{resource: amount}`. */
  readonly resourceRestrictions: Readonly<Record<string, number>>;
  /** The error text of an erred task, else `""`. */
  readonly exceptionText: string;
  /** The traceback text of an erred task, else `""`. */
  readonly tracebackText: string;
  /** The normalized dict, for every other field. */
  readonly raw: DumpObject;
}

function taskRefs(obj: DumpObject, field: string, path: PathNode, ctx: Ctx): TaskRef[] {
  const v = obj[field];
  if (v === undefined || v === null) return [];
  const p = child(path, field);
  return ctx.list(v, p).map((item, i) => {
    const s = ctx.string(item, child(p, i));
    const ref = parseTaskStateRepr(s);
    if (!ref)
      ctx.fail(child(p, i), `expected a "<TaskState key state>" reference, got ${describe(s)}`);
    return ref;
  });
}

function normalizeTask(key: string, v: DumpValue, path: PathNode, ctx: Ctx): DumpTask {
  const t = ctx.object(v, path);
  const dumpedKey = keyString(t.key, child(path, "key"), ctx);
  if (dumpedKey !== key) {
    ctx.fail(
      child(path, "key"),
      `the task's key ${JSON.stringify(dumpedKey)} differs from its entry's key`,
    );
  }
  t.key = dumpedKey;
  const state = ctx.string(t.state, child(path, "state"));
  let priority: number[] | null = null;
  if (t.priority !== undefined && t.priority !== null) {
    const p = child(path, "priority");
    priority = ctx.list(t.priority, p).map((n, i) => ctx.number(n, child(p, i)));
  }
  const whoHasPath = child(path, "who_has");
  const whoHas =
    t.who_has === undefined || t.who_has === null
      ? []
      : ctx.list(t.who_has, whoHasPath).map((w, i) => ctx.string(w, child(whoHasPath, i)));
  const rrPath = child(path, "resource_restrictions");
  const resourceRestrictions: Record<string, number> = {};
  if (t.resource_restrictions !== undefined && t.resource_restrictions !== null) {
    for (const [r, n] of Object.entries(ctx.object(t.resource_restrictions, rrPath))) {
      resourceRestrictions[r] = ctx.number(n, child(rrPath, r));
    }
  }
  return {
    key,
    state,
    previous: ctx.optionalString(t.previous, child(path, "previous")),
    next: ctx.optionalString(t.next, child(path, "next")),
    done: ctx.optionalBoolean(t.done, child(path, "done")) ?? false,
    priority,
    nbytes: ctx.optionalNumber(t.nbytes, child(path, "nbytes")),
    runId: ctx.optionalNumber(t.run_id, child(path, "run_id")) ?? 0,
    dependencies: taskRefs(t, "dependencies", path, ctx),
    dependents: taskRefs(t, "dependents", path, ctx),
    waitingForData: taskRefs(t, "waiting_for_data", path, ctx),
    waiters: taskRefs(t, "waiters", path, ctx),
    whoHas,
    comingFrom: ctx.optionalString(t.coming_from, child(path, "coming_from")),
    resourceRestrictions,
    exceptionText: ctx.optionalString(t.exception_text, child(path, "exception_text")) ?? "",
    tracebackText: ctx.optionalString(t.traceback_text, child(path, "traceback_text")) ?? "",
    raw: t,
  };
}

// ---------------------------------------------------------------------------
// Dask configuration
// ---------------------------------------------------------------------------

/** `dask.config.canonical_name`: `k`, or its `-`/`_` variant when only that exists. */
function canonicalName(k: string, config: DumpObject): string {
  if (Object.hasOwn(config, k)) return k;
  const alt = k.includes("_") ? k.replaceAll("_", "-") : k.replaceAll("-", "_");
  return Object.hasOwn(config, alt) ? alt : k;
}

/**
 * A worker's dumped Dask configuration (`dask.config.config`), read the way
 * `dask.config.get` reads it (dotted keys, `-` and `_` interchangeable). The
 * typed getters throw {@link DumpFormatError} naming the config path when a
 * value is missing or of the wrong type.
 */
export class DaskConfig {
  /** The normalized configuration mapping. */
  readonly raw: DumpObject;
  readonly #ctx: Ctx;
  readonly #path: PathNode | null;

  /** Wraps a config mapping; `file` and `path` locate it in error messages. */
  constructor(raw: DumpObject, file = "<config>", path: string | null = null) {
    this.raw = raw;
    this.#ctx = new Ctx(file);
    this.#path = path === null ? null : child(null, { rendered: path });
  }

  #pathOf(key: string): PathNode | null {
    let p = this.#path;
    for (const part of key.split(".")) p = child(p, part);
    return p;
  }

  /** `dask.config.get(key)`, or undefined when the key is absent. */
  get(key: string): DumpValue | undefined {
    let cur: DumpValue = this.raw;
    for (const part of key.split(".")) {
      if (!isDumpObject(cur)) return undefined;
      const name = canonicalName(part, cur);
      if (!Object.hasOwn(cur, name)) return undefined;
      cur = cur[name];
    }
    return cur;
  }

  /** Whether `key` is set. */
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** A required number (`inf` reads as Infinity). */
  number(key: string): number {
    return this.#ctx.number(this.get(key), this.#pathOf(key));
  }

  /** A required boolean. */
  boolean(key: string): boolean {
    const v = this.get(key);
    if (typeof v === "boolean") return v;
    return this.#ctx.fail(
      this.#pathOf(key),
      v === undefined ? "missing (expected a boolean)" : `expected a boolean, got ${describe(v)}`,
    );
  }

  /** A required string. */
  string(key: string): string {
    return this.#ctx.string(this.get(key), this.#pathOf(key));
  }

  /** A required fraction that may be `false` (disabled), as the memory thresholds are. */
  fractionOrFalse(key: string): number | false {
    const v = this.get(key);
    if (v === false || typeof v === "number") return v;
    return this.#ctx.fail(
      this.#pathOf(key),
      v === undefined
        ? "missing (expected a number or false)"
        : `expected a number or false, got ${describe(v)}`,
    );
  }

  /** A required byte size: `dask.utils.parse_bytes` of a number or a string such as `"50MB"`. */
  bytes(key: string): number {
    const v = this.get(key);
    const path = this.#pathOf(key);
    if (typeof v !== "number" && typeof v !== "string") {
      return this.#ctx.fail(
        path,
        v === undefined
          ? "missing (expected a byte size)"
          : `expected a byte size, got ${describe(v)}`,
      );
    }
    try {
      return parseBytes(v);
    } catch (e) {
      return this.#ctx.fail(
        path,
        `not a byte size: ${e instanceof Error ? e.message : String(e)}`,
        e,
      );
    }
  }

  /** `distributed.worker.transfer.message-bytes-limit`, parsed (the WorkerState's `transfer_message_bytes_limit`). */
  transferMessageBytesLimit(): number {
    return this.bytes("distributed.worker.transfer.message-bytes-limit");
  }

  /** `distributed.worker.connections.incoming`: how many peers may fetch from this worker at once (`Worker.transfer_outgoing_count_limit`). */
  connectionsIncoming(): number {
    return this.number("distributed.worker.connections.incoming");
  }

  /** `distributed.worker.connections.outgoing`: how many peers this worker fetches from at once (the WorkerState's `transfer_incoming_count_limit`). */
  connectionsOutgoing(): number {
    return this.number("distributed.worker.connections.outgoing");
  }

  /** `distributed.worker.memory.transfer`: share of the memory limit that incoming transfers may take, or false. */
  memoryTransferFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.transfer");
  }

  /** `distributed.worker.memory.target`. */
  memoryTargetFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.target");
  }

  /** `distributed.worker.memory.spill`. */
  memorySpillFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.spill");
  }

  /** `distributed.worker.memory.pause`. */
  memoryPauseFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.pause");
  }

  /** `distributed.worker.resources` (`{}` when absent): a Worker's resources when none are passed to it. */
  workerResources(): Record<string, number> {
    const key = "distributed.worker.resources";
    const v = this.get(key);
    if (v === undefined || v === null) return {};
    const path = this.#pathOf(key);
    const out: Record<string, number> = {};
    for (const [r, n] of Object.entries(this.#ctx.object(v, path)))
      out[r] = this.#ctx.number(n, child(path, r));
    return out;
  }

  /** `distributed.worker.validate` (false when absent, Dask's default). */
  workerValidate(): boolean {
    return this.has("distributed.worker.validate")
      ? this.boolean("distributed.worker.validate")
      : false;
  }
}

// ---------------------------------------------------------------------------
// Workers, scheduler, versions
// ---------------------------------------------------------------------------

/**
 * What `Worker.__init__` passes to its `WorkerState`, derived from the dumped
 * worker; the field names and `null`-for-infinity convention are those of the
 * conformance vectors' `config` (`../shared/conformance/FORMAT.md`).
 */
export interface WorkerStateParameters {
  /** Threads. */
  readonly nthreads: number;
  /** The worker's address. */
  readonly address: string;
  /** Total resources (see {@link WorkerDump.resourcesSource}). */
  readonly resources: Readonly<Record<string, number>>;
  /** `distributed.worker.connections.outgoing` (sic: incoming transfers use outgoing connections). */
  readonly transfer_incoming_count_limit: number;
  /** `int(memory_limit * distributed.worker.memory.transfer)`, null (infinite) without a memory limit or with the fraction `false`. */
  readonly transfer_incoming_bytes_limit: number | null;
  /** `parse_bytes(distributed.worker.transfer.message-bytes-limit)`. */
  readonly transfer_message_bytes_limit: number | null;
  /** Constant in `WorkerState.__init__`: `int(10e6)`. */
  readonly transfer_incoming_bytes_throttle_threshold: number;
  /** `distributed.worker.validate`. */
  readonly validate: boolean;
  /** The Worker's `transition_counter_max` argument (default False); the dump does not record it. */
  readonly transition_counter_max: number | false;
}

/** One worker of the dump, typed. */
export interface WorkerDump {
  /** The worker's address (its key in `workers`). */
  readonly address: string;
  /** `Worker-…` id, or null. */
  readonly id: string | null;
  /** Threads. */
  readonly nthreads: number;
  /** The memory limit in bytes, or null (no limit). */
  readonly memoryLimit: number | null;
  /** The server status name (`"running"` from `"<Status.running: 'running'>"`), or null. */
  readonly status: string | null;
  /** `WorkerState.running`, or null when absent. */
  readonly running: boolean | null;
  /** The dumped Dask configuration. */
  readonly config: DaskConfig;
  /** Total resources: the scheduler's record of this worker when present, else `distributed.worker.resources`. */
  readonly resources: Readonly<Record<string, number>>;
  /** Where {@link resources} came from. */
  readonly resourcesSource: "scheduler" | "config";
  /** The WorkerState constructor parameters this worker ran with. */
  readonly stateParameters: WorkerStateParameters;
  /** The stimulus log, oldest first. */
  readonly stimulusLog: readonly DumpEvent[];
  /** True when the stimulus log is full (10,000 events): older events were dropped and a replay from scratch is impossible. */
  readonly stimulusLogFull: boolean;
  /** The transition log (`WorkerState.log`), oldest first, as lists. */
  readonly log: readonly WorkerLogEntry[];
  /** True when the log is full (100,000 entries). */
  readonly logFull: boolean;
  /** The worker's tasks by key, in dump order. */
  readonly tasks: ReadonlyMap<string, DumpTask>;
  /** `WorkerState.transition_counter`. */
  readonly transitionCounter: number;
  /** Keys in `data` (memory). */
  readonly dataKeys: readonly string[];
  /** `ready` keys in pop order. */
  readonly ready: readonly string[];
  /** `constrained` keys in pop order. */
  readonly constrained: readonly string[];
  /** Keys executing. */
  readonly executing: readonly string[];
  /** Keys long-running (seceded). */
  readonly longRunning: readonly string[];
  /** Keys in flight. */
  readonly inFlightTasks: readonly string[];
  /** Keys whose fetch found no replica. */
  readonly missingDepFlight: readonly string[];
  /** `{worker: keys}` of data this worker will fetch. */
  readonly dataNeeded: Readonly<Record<string, readonly string[]>>;
  /** `{worker: keys}` the worker believes each peer holds. */
  readonly hasWhat: Readonly<Record<string, readonly string[]>>;
  /** `{worker: keys}` being fetched. */
  readonly inFlightWorkers: Readonly<Record<string, readonly string[]>>;
  /** Peers that answered busy. */
  readonly busyWorkers: readonly string[];
  /** The whole normalized worker dict. */
  readonly raw: DumpObject;
}

/** The scheduler part of the dump (a typed subset). */
export interface SchedulerDump {
  /** The scheduler's address, or null. */
  readonly address: string | null;
  /** `Scheduler-…` id, or null. */
  readonly id: string | null;
  /** Status name (`"running"`), or null. */
  readonly status: string | null;
  /** `Scheduler.transition_counter`, or null. */
  readonly transitionCounter: number | null;
  /** `[key, start, finish, recommendations, stimulus_id, time]` entries (key normalized). */
  readonly transitionLog: readonly (readonly DumpValue[])[];
  /** The scheduler's TaskState dicts by key. */
  readonly tasks: ReadonlyMap<string, DumpObject>;
  /** The scheduler's WorkerState dicts by address. */
  readonly workers: ReadonlyMap<string, DumpObject>;
  /** The whole normalized scheduler dict. */
  readonly raw: DumpObject;
}

/** The `versions` part of the dump. */
export interface DumpVersions {
  /** `packages.distributed` of the scheduler, or null. */
  readonly distributed: string | null;
  /** `packages.dask` of the scheduler, or null. */
  readonly dask: string | null;
  /** `packages.python` of the scheduler, or null. */
  readonly python: string | null;
  /** The scheduler's `{host, packages}`, or null. */
  readonly scheduler: DumpObject | null;
  /** Each worker's `{host, packages}`. */
  readonly workers: Readonly<Record<string, DumpObject>>;
  /** The whole normalized dict. */
  readonly raw: DumpObject;
}

/** A loaded cluster dump. */
export interface ClusterDump {
  /** The file it was read from (or the label given to {@link parseClusterDump}). */
  readonly file: string;
  /** The file's encoding. */
  readonly encoding: DumpEncoding;
  /** The scheduler. */
  readonly scheduler: SchedulerDump;
  /** The workers that answered, by address, in dump order. */
  readonly workers: ReadonlyMap<string, WorkerDump>;
  /** Workers whose entry is not a dict (the repr of the error the dump got from them). */
  readonly unavailableWorkers: ReadonlyMap<string, string>;
  /** Package versions. */
  readonly versions: DumpVersions;
  /** The whole normalized dump. */
  readonly raw: DumpObject;
}

const STATUS_REPR = /^<Status\.([A-Za-z_]+): '[^']*'>$/;

function statusName(v: DumpValue | undefined, path: PathNode, ctx: Ctx): string | null {
  const s = ctx.optionalString(v, path);
  if (s === null) return null;
  return STATUS_REPR.exec(s)?.[1] ?? s;
}

function numberRecord(v: DumpValue | undefined, path: PathNode, ctx: Ctx): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(ctx.object(v, path))) out[k] = ctx.number(n, child(path, k));
  return out;
}

function optionalKeyList(obj: DumpObject, field: string, path: PathNode, ctx: Ctx): string[] {
  if (obj[field] === undefined || obj[field] === null) return [];
  const list = keyList(obj[field], child(path, field), ctx);
  obj[field] = list;
  return list;
}

function optionalKeyListsByWorker(
  obj: DumpObject,
  field: string,
  path: PathNode,
  ctx: Ctx,
): Record<string, string[]> {
  if (obj[field] === undefined || obj[field] === null) return {};
  return keyListsByWorker(obj[field], child(path, field), ctx);
}

function buildWorker(
  address: string,
  w: DumpObject,
  path: PathNode,
  schedulerWorker: DumpObject | undefined,
  ctx: Ctx,
): WorkerDump {
  const dumpedAddress = ctx.optionalString(w.address, child(path, "address"));
  if (dumpedAddress !== null && dumpedAddress !== address) {
    ctx.fail(
      child(path, "address"),
      `the worker's address ${JSON.stringify(dumpedAddress)} differs from its entry's key`,
    );
  }
  const nthreads = ctx.number(w.nthreads, child(path, "nthreads"));
  const memoryLimit = ctx.optionalNumber(w.memory_limit, child(path, "memory_limit"));
  const configPath = child(path, "config");
  const config = new DaskConfig(ctx.object(w.config, configPath), ctx.file, renderPath(configPath));

  const slPath = child(path, "stimulus_log");
  const stimulusLog = ctx
    .list(w.stimulus_log, slPath)
    .map((e, i) => normalizeEvent(e, child(slPath, i), ctx));
  const logPath = child(path, "log");
  const log = ctx.list(w.log, logPath).map((e, i) => normalizeLogEntry(e, child(logPath, i), ctx));
  const tasksPath = child(path, "tasks");
  const tasks = new Map<string, DumpTask>();
  for (const [key, t] of Object.entries(ctx.object(w.tasks, tasksPath))) {
    tasks.set(key, normalizeTask(key, t, child(tasksPath, key), ctx));
  }
  const transitionCounter = ctx.number(w.transition_counter, child(path, "transition_counter"));

  let resources: Record<string, number>;
  let resourcesSource: "scheduler" | "config";
  if (schedulerWorker && isDumpObject(schedulerWorker.resources)) {
    const p = child(child(child(null, "scheduler"), "workers"), address);
    resources = numberRecord(schedulerWorker.resources, child(p, "resources"), ctx);
    resourcesSource = "scheduler";
  } else {
    resources = config.workerResources();
    resourcesSource = "config";
  }

  const fraction = config.memoryTransferFraction();
  const stateParameters: WorkerStateParameters = {
    nthreads,
    address,
    resources,
    transfer_incoming_count_limit: config.connectionsOutgoing(),
    transfer_incoming_bytes_limit:
      memoryLimit !== null && fraction !== false ? Math.trunc(memoryLimit * fraction) : null,
    transfer_message_bytes_limit: config.transferMessageBytesLimit(),
    transfer_incoming_bytes_throttle_threshold: 10_000_000,
    validate: config.workerValidate(),
    transition_counter_max: false,
  };

  let dataKeys: string[] = [];
  if (w.data !== undefined && w.data !== null)
    dataKeys = Object.keys(ctx.object(w.data, child(path, "data")));
  const busyPath = child(path, "busy_workers");
  const busyWorkers =
    w.busy_workers === undefined || w.busy_workers === null
      ? []
      : ctx.list(w.busy_workers, busyPath).map((b, i) => ctx.string(b, child(busyPath, i)));

  return {
    address,
    id: ctx.optionalString(w.id, child(path, "id")),
    nthreads,
    memoryLimit,
    status: statusName(w.status, child(path, "status"), ctx),
    running: ctx.optionalBoolean(w.running, child(path, "running")),
    config,
    resources,
    resourcesSource,
    stateParameters,
    stimulusLog,
    stimulusLogFull: stimulusLog.length >= 10_000,
    log,
    logFull: log.length >= 100_000,
    tasks,
    transitionCounter,
    dataKeys,
    ready: optionalKeyList(w, "ready", path, ctx),
    constrained: optionalKeyList(w, "constrained", path, ctx),
    executing: optionalKeyList(w, "executing", path, ctx),
    longRunning: optionalKeyList(w, "long_running", path, ctx),
    inFlightTasks: optionalKeyList(w, "in_flight_tasks", path, ctx),
    missingDepFlight: optionalKeyList(w, "missing_dep_flight", path, ctx),
    dataNeeded: optionalKeyListsByWorker(w, "data_needed", path, ctx),
    hasWhat: optionalKeyListsByWorker(w, "has_what", path, ctx),
    inFlightWorkers: optionalKeyListsByWorker(w, "in_flight_workers", path, ctx),
    busyWorkers,
    raw: w,
  };
}

function buildScheduler(s: DumpObject, ctx: Ctx): SchedulerDump {
  const path = child(null, "scheduler");
  const transitionLog: DumpValue[][] = [];
  if (s.transition_log !== undefined && s.transition_log !== null) {
    const p = child(path, "transition_log");
    ctx.list(s.transition_log, p).forEach((e, i) => {
      const entry = ctx.list(e, child(p, i));
      if (entry.length > 0) entry[0] = keyString(entry[0], child(child(p, i), 0), ctx);
      transitionLog.push(entry);
    });
  }
  const tasks = new Map<string, DumpObject>();
  if (s.tasks !== undefined && s.tasks !== null) {
    const p = child(path, "tasks");
    for (const [key, t] of Object.entries(ctx.object(s.tasks, p))) {
      const task = ctx.object(t, child(p, key));
      if (Object.hasOwn(task, "key"))
        task.key = keyString(task.key, child(child(p, key), "key"), ctx);
      tasks.set(key, task);
    }
  }
  const workers = new Map<string, DumpObject>();
  if (s.workers !== undefined && s.workers !== null) {
    const p = child(path, "workers");
    for (const [address, w] of Object.entries(ctx.object(s.workers, p))) {
      workers.set(address, ctx.object(w, child(p, address)));
    }
  }
  return {
    address: ctx.optionalString(s.address, child(path, "address")),
    id: ctx.optionalString(s.id, child(path, "id")),
    status: statusName(s.status, child(path, "status"), ctx),
    transitionCounter: ctx.optionalNumber(s.transition_counter, child(path, "transition_counter")),
    transitionLog,
    tasks,
    workers,
    raw: s,
  };
}

function buildVersions(v: DumpObject, ctx: Ctx): DumpVersions {
  const path = child(null, "versions");
  const scheduler =
    v.scheduler === undefined || v.scheduler === null
      ? null
      : ctx.object(v.scheduler, child(path, "scheduler"));
  const workers: Record<string, DumpObject> = {};
  if (v.workers !== undefined && v.workers !== null) {
    const p = child(path, "workers");
    for (const [address, w] of Object.entries(ctx.object(v.workers, p))) {
      if (isDumpObject(w)) workers[address] = w;
    }
  }
  const packages = scheduler && isDumpObject(scheduler.packages) ? scheduler.packages : {};
  const pkg = (name: string): string | null =>
    typeof packages[name] === "string" ? packages[name] : null;
  return {
    distributed: pkg("distributed"),
    dask: pkg("dask"),
    python: pkg("python"),
    scheduler,
    workers,
    raw: v,
  };
}

function buildDump(decoded: unknown, ctx: Ctx, encoding: DumpEncoding): ClusterDump {
  const root = normalizeTree(decoded, null, ctx);
  if (!isDumpObject(root)) {
    ctx.fail(
      null,
      `not a cluster dump: expected a mapping with "scheduler", "workers" and "versions" at the top level, got ${describe(root)}`,
    );
  }
  const missing = ["scheduler", "workers", "versions"].filter((k) => !Object.hasOwn(root, k));
  if (missing.length > 0) {
    const found = Object.keys(root)
      .slice(0, 5)
      .map((k) => JSON.stringify(k))
      .join(", ");
    ctx.fail(
      null,
      `not a cluster dump: no ${missing.map((k) => JSON.stringify(k)).join(", ")} at the top level (found ${found || "nothing"})`,
    );
  }
  const scheduler = buildScheduler(ctx.object(root.scheduler, child(null, "scheduler")), ctx);
  const workersPath = child(null, "workers");
  const workers = new Map<string, WorkerDump>();
  const unavailableWorkers = new Map<string, string>();
  for (const [address, w] of Object.entries(ctx.object(root.workers, workersPath))) {
    const p = child(workersPath, address);
    if (typeof w === "string") {
      unavailableWorkers.set(address, w);
      continue;
    }
    workers.set(
      address,
      buildWorker(address, ctx.object(w, p), p, scheduler.workers.get(address), ctx),
    );
  }
  const versions = buildVersions(ctx.object(root.versions, child(null, "versions")), ctx);
  return { file: ctx.file, encoding, scheduler, workers, unavailableWorkers, versions, raw: root };
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

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
  try {
    if (data.length === 0) ctx.fail(null, "the file is empty");
    let bytes = data;
    if (encoding === "msgpack.gz" || encoding === "yaml.gz") bytes = gunzip(data, ctx, encoding);
    const decoded = encoding.startsWith("msgpack")
      ? decodeMsgpack(bytes, ctx)
      : decodeYaml(bytes, ctx);
    return buildDump(decoded, ctx, encoding);
  } catch (e) {
    if (e instanceof DumpFormatError) throw e;
    // Not expected: report it as a load failure rather than leak a raw TypeError.
    const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new DumpFormatError(source, null, `cannot read the dump (${msg})`, { cause: e });
  }
}

function displayPath(path: string | URL): string {
  return typeof path === "string"
    ? path
    : path.protocol === "file:"
      ? fileURLToPath(path)
      : path.href;
}

function readError(file: string, e: unknown): DumpFormatError {
  const code = (e as { code?: unknown }).code;
  const reason =
    code === "ENOENT"
      ? "cannot read the file: it does not exist"
      : code === "EISDIR"
        ? "cannot read the file: it is a directory"
        : code === "EACCES" || code === "EPERM"
          ? "cannot read the file: permission denied"
          : `cannot read the file (${e instanceof Error ? e.message : String(e)})`;
  return new DumpFormatError(file, null, reason, { cause: e });
}

function checkExtension(file: string): void {
  if (dumpEncodingOf(file) === null) {
    throw new DumpFormatError(
      file,
      null,
      `unsupported file extension: a cluster dump is ${SUPPORTED_EXTENSIONS}`,
    );
  }
}

/**
 * Reads a cluster dump file (`.msgpack.gz`, `.msgpack`, `.yaml`, `.yml`,
 * `.yaml.gz`, `.yml.gz`) and returns its normalized, typed content. Rejects
 * with {@link DumpFormatError} for an unreadable file or invalid content.
 */
export async function loadClusterDump(path: string | URL): Promise<ClusterDump> {
  const file = displayPath(path);
  checkExtension(file);
  let data: Uint8Array;
  try {
    data = await readFile(path);
  } catch (e) {
    throw readError(file, e);
  }
  return parseClusterDump(data, file);
}

/** Synchronous {@link loadClusterDump}. */
export function loadClusterDumpSync(path: string | URL): ClusterDump {
  const file = displayPath(path);
  checkExtension(file);
  let data: Uint8Array;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw readError(file, e);
  }
  return parseClusterDump(data, file);
}
