/**
 * Where JSON goes wrong, found in one pass: the index of the first character
 * no JSON text could go on with. Node.js 20 gives no place for an unexpected
 * token (a trailing comma, a single quote); parsing ever longer prefixes to
 * find it took 23 parses, 9 s for an 8 MiB graph on a loaded host.
 */

/** What the scanner expects next. */
type Expecting = "value" | "key" | "after-value";

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPED = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const LITERALS: Readonly<Record<string, string>> = { t: "true", f: "false", n: "null" };

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (ch: string) => /^[0-9a-fA-F]$/.test(ch);

/**
 * The index of the first character of `text` where no JSON text could go on
 * (`text.length` for a text cut short, which more characters could complete),
 * or -1 for a whole JSON text. The grammar is JSON.parse's: RFC 8259, its four
 * whitespace characters, any code unit but a control character in strings.
 */
export function jsonFirstBadChar(text: string): number {
  const n = text.length;
  // The containers open, innermost last: true for an object.
  const open: boolean[] = [];
  let i = 0;
  let expecting: Expecting = "value";
  const skipWhitespace = () => {
    while (i < n && WHITESPACE.has(text.charCodeAt(i))) i++;
  };
  for (;;) {
    skipWhitespace();
    if (expecting === "after-value") {
      if (open.length === 0) return i === n ? -1 : i;
      if (i === n) return n;
      const ch = text[i];
      const inObject = open[open.length - 1];
      if (ch === ",") {
        i++;
        expecting = inObject ? "key" : "value";
      } else if (ch === (inObject ? "}" : "]")) {
        i++;
        open.pop();
      } else {
        return i;
      }
      continue;
    }
    if (i === n) return n;
    if (expecting === "key") {
      if (text[i] !== '"') return i;
      const end = stringEnd(text, i);
      if (end < 0) return -end - 1;
      i = end;
      skipWhitespace();
      if (i === n) return n;
      if (text[i] !== ":") return i;
      i++;
      expecting = "value";
      continue;
    }
    const ch = text[i];
    if (ch === "{" || ch === "[") {
      i++;
      skipWhitespace();
      if (i === n) return n;
      if (text[i] === (ch === "{" ? "}" : "]")) {
        i++;
        expecting = "after-value";
      } else {
        open.push(ch === "{");
        expecting = ch === "{" ? "key" : "value";
      }
      continue;
    }
    const end =
      ch === '"'
        ? stringEnd(text, i)
        : ch === "-" || isDigit(text.charCodeAt(i))
          ? numberEnd(text, i)
          : literalEnd(text, i);
    if (end < 0) return -end - 1;
    i = end;
    expecting = "after-value";
  }
}

/**
 * Past the string that starts at `start` (a `"`): the index after its closing
 * quote, or `-(bad + 1)` where it goes wrong (`bad` is the text's length if it is cut short).
 */
function stringEnd(text: string, start: number): number {
  const n = text.length;
  let i = start + 1;
  for (;;) {
    if (i === n) return -(n + 1);
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -(i + 1);
    if (c !== 0x5c) {
      i++;
      continue;
    }
    i++;
    if (i === n) return -(n + 1);
    if (ESCAPED.has(text[i])) {
      i++;
      continue;
    }
    if (text[i] !== "u") return -(i + 1);
    i++;
    for (let k = 0; k < 4; k++, i++) {
      if (i === n) return -(n + 1);
      if (!isHex(text[i])) return -(i + 1);
    }
  }
}

/** Past the number that starts at `start` (see {@link stringEnd}). */
function numberEnd(text: string, start: number): number {
  const n = text.length;
  let i = start;
  const digits = (): number => {
    if (i === n) return -(n + 1);
    if (!isDigit(text.charCodeAt(i))) return -(i + 1);
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    return i;
  };
  if (text[i] === "-") i++;
  if (i === n) return -(n + 1);
  if (text[i] === "0") {
    i++;
  } else {
    const end = digits();
    if (end < 0) return end;
  }
  if (text[i] === ".") {
    i++;
    const end = digits();
    if (end < 0) return end;
  }
  if (text[i] === "e" || text[i] === "E") {
    i++;
    if (text[i] === "+" || text[i] === "-") i++;
    const end = digits();
    if (end < 0) return end;
  }
  return i;
}

/** Past the literal (`true`, `false`, `null`) that starts at `start` (see {@link stringEnd}). */
function literalEnd(text: string, start: number): number {
  const word = Object.hasOwn(LITERALS, text[start]) ? LITERALS[text[start]] : undefined;
  if (word === undefined) return -(start + 1);
  for (let k = 0; k < word.length; k++) {
    const i = start + k;
    if (i === text.length) return -(i + 1);
    if (text[i] !== word[k]) return -(i + 1);
  }
  return start + word.length;
}
