/**
 * Python `str` primitives that differ from their JS look-alikes, shared by the
 * ports of dask string utilities (`key_split`, `parse_bytes`) so that they
 * behave on the same inputs the way the reference does.
 */

/**
 * Code points for which Python's `str.isspace()` is true (what `str.split()`
 * and `str.strip()` with no argument use). JS `\s` differs: it lacks
 * U+001C..U+001F and U+0085 and includes U+FEFF.
 */
const PY_WHITESPACE: ReadonlySet<number> = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
  0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000,
]);

/** Python's `str.isspace()` for one UTF-16 code unit (all Python whitespace is in the BMP). */
export function isPyWhitespace(codeUnit: number): boolean {
  return PY_WHITESPACE.has(codeUnit);
}

/** Python's `str.split()` with no argument: split on runs of whitespace, dropping empty parts. */
export function pySplitWhitespace(s: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < s.length; i++) {
    if (PY_WHITESPACE.has(s.charCodeAt(i))) {
      if (start >= 0) out.push(s.slice(start, i));
      start = -1;
    } else if (start < 0) {
      start = i;
    }
  }
  if (start >= 0) out.push(s.slice(start));
  return out;
}

/**
 * Python's `str.strip(chars)`; with `chars` undefined, `str.strip()` (Python
 * whitespace). `chars` is a set of BMP characters.
 */
export function pyStrip(s: string, chars?: string): string {
  const drop =
    chars === undefined
      ? (c: number) => PY_WHITESPACE.has(c)
      : (c: number) => chars.includes(String.fromCharCode(c));
  let start = 0;
  let end = s.length;
  while (start < end && drop(s.charCodeAt(start))) start++;
  while (end > start && drop(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** Python's `str.isalpha()`: non-empty and every code point a Unicode letter (L*). */
export function pyIsAlpha(s: string): boolean {
  return /^\p{L}+$/u.test(s);
}

/** Python's `len(str)`: the number of code points (JS `length` counts UTF-16 units). */
export function pyLen(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Count a high surrogate followed by a low surrogate once.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Code points Python's `str.isprintable()` rejects (beyond ASCII): categories
 * Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs. Node's Unicode tables may be a version
 * newer than the reference's Python, which only matters for unassigned (Cn)
 * code points assigned since.
 */
const PY_UNPRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/**
 * Python's `repr()` of a `str`: single quotes, or double quotes when the text
 * holds a single quote and no double quote; backslashes, the quote, ASCII
 * control characters and what `str.isprintable()` rejects escaped as `\xNN`,
 * `\uNNNN` or `\UNNNNNNNN` (lone surrogates included).
 */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === "\\" || ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += `\\x${hex(c, 2)}`;
    else if (c < 0x7f || !PY_UNPRINTABLE.test(ch)) out += ch;
    else if (c <= 0xff) out += `\\x${hex(c, 2)}`;
    else if (c <= 0xffff) out += `\\u${hex(c, 4)}`;
    else out += `\\U${hex(c, 8)}`;
  }
  return out + quote;
}

function hex(c: number, width: number): string {
  return c.toString(16).padStart(width, "0");
}

/** One element of a tuple's `str()`: a string's or number's repr, None, True, False, or a tuple. */
const TUPLE_ATOM =
  /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan)|None|True|False/y;

/** The end of the tuple literal starting at `s[i]` (an opening parenthesis), or -1. */
function tupleEnd(s: string, i: number): number {
  if (s[i] !== "(") return -1;
  i++;
  if (s[i] === ")") return i + 1; // ()
  let items = 0;
  for (;;) {
    if (s[i] === "(") {
      i = tupleEnd(s, i);
      if (i < 0) return -1;
    } else {
      TUPLE_ATOM.lastIndex = i;
      if (!TUPLE_ATOM.test(s)) return -1;
      i = TUPLE_ATOM.lastIndex;
    }
    items++;
    if (s[i] === ")") return items === 1 ? -1 : i + 1; // one item needs its comma
    if (s[i] !== ",") return -1;
    i++;
    if (s[i] === ")") return items === 1 ? i + 1 : -1; // only ('solo',) has a trailing comma
    if (s[i] !== " ") return -1;
    i++;
  }
}

/**
 * How Python prints a task key: a key that was a tuple (written in its `str()`
 * form, `('x', 0)`) as that tuple, any other as a string's `repr()`.
 */
export function pyKeyRepr(key: string): string {
  return tupleEnd(key, 0) === key.length ? key : pyRepr(key);
}
