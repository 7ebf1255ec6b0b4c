/**
 * Python's `repr()`/`str()` as the dumps hold them: writing them for task keys, and
 * reading back the reprs Dask leaves in a dump (strings, `TaskState`s, `str(type)`).
 */

import { cutText } from "../../util/cutText.ts";

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
export function pyStr(v: unknown): string | null {
  return typeof v === "string" ? v : pyRepr(v);
}

/** End index (exclusive) of the Python string literal starting at `i`, or -1. */
export function scanPyStringLiteral(s: string, i: number): number {
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

/** `<TaskState KEY STATE>`: the key is everything up to the last space, the state after it. */
const TASK_STATE_REPR = /^<TaskState (.+) ([^ ]+)>$/s;
/** A state's name: `memory`, `long-running`, `no-worker` (and `None`, a `previous` Dask leaves unset). */
const STATE_NAME = /^[A-Za-z]+(?:-[A-Za-z]+)*$/;
/** `cancelled(PREVIOUS)` or `resumed(PREVIOUS->NEXT)`, as the seed's `TaskState.__repr__` writes them. */
const COMPOSITE_STATE = /^([^()]+)\((.*)\)$/s;

/** A task referenced from another task (`"<TaskState 'key' state>"` in the dump). */
export interface TaskRef {
  /** The key, as Python's `str()` writes it. */
  readonly key: string;
  /**
   * The referenced task's state when the dump was taken: its name only, `cancelled`
   * or `resumed` for `cancelled(PREVIOUS)` and `resumed(PREVIOUS->NEXT)`.
   */
  readonly state: string;
  /** `previous` of a task referenced as `cancelled(PREVIOUS)` or `resumed(PREVIOUS->NEXT)`; absent otherwise. */
  readonly previous?: string;
  /** `next` of a task referenced as `resumed(PREVIOUS->NEXT)`; absent otherwise. */
  readonly next?: string;
}

/**
 * The state of a `repr(TaskState)`: a state name (`memory`, `long-running`), or a
 * cancelled or resumed task's as the seed's worker writes them,
 * `cancelled(executing)` and `resumed(executing->fetch)`; null for anything else.
 */
export function parseTaskStateReprState(
  token: string,
): Pick<TaskRef, "state" | "previous" | "next"> | null {
  if (STATE_NAME.test(token)) return { state: token };
  const m = COMPOSITE_STATE.exec(token);
  if (!m) return null;
  const [, state, inner] = m;
  if (state === "cancelled") {
    return STATE_NAME.test(inner) ? { state, previous: inner } : null;
  }
  if (state === "resumed") {
    const parts = inner.split("->");
    if (parts.length !== 2 || !parts.every((p) => STATE_NAME.test(p))) return null;
    return { state, previous: parts[0], next: parts[1] };
  }
  return null;
}

/**
 * Parses `repr(TaskState)` (`"<TaskState 'x-1' memory>"`, `"<TaskState ('x', 1) memory>"`,
 * `"<TaskState 'x' cancelled(flight)>"`, `"<TaskState 'x' resumed(executing->fetch)>"`);
 * null if `s` is not one. {@link taskStateReprProblem} says why.
 */
export function parseTaskStateRepr(s: string): TaskRef | null {
  const m = TASK_STATE_REPR.exec(s);
  if (!m) return null;
  const keyRepr = m[1];
  const key =
    keyRepr.startsWith("'") || keyRepr.startsWith('"') ? parsePyStrLiteral(keyRepr) : keyRepr;
  if (key === null) return null;
  const state = parseTaskStateReprState(m[2]);
  return state === null ? null : { key, ...state };
}

/**
 * Why `s` is not a `repr(TaskState)` that {@link parseTaskStateRepr} reads, naming `s`
 * (up to 200 characters): the reason of a dump reader's error.
 */
export function taskStateReprProblem(s: string): string {
  const value = JSON.stringify(cutText(s, 200));
  const m = TASK_STATE_REPR.exec(s);
  if (!m) return `expected a "<TaskState key state>" reference, got ${value}`;
  const keyRepr = m[1];
  if ((keyRepr.startsWith("'") || keyRepr.startsWith('"')) && parsePyStrLiteral(keyRepr) === null) {
    return `the key ${keyRepr} is not a Python string literal, in ${value}`;
  }
  return `the state ${JSON.stringify(m[2])} is neither a state's name nor cancelled(PREVIOUS) or resumed(PREVIOUS->NEXT), in ${value}`;
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
