/**
 * A port of `dask.utils.key_split`: the "prefix" of a task key, which the
 * reference uses to group tasks of the same kind (task-prefix metrics,
 * duration estimates, stories).
 *
 * Ported character-for-character with Python string semantics: lengths and
 * indexing count code points, `str.isalpha` is "Unicode letter", `str.strip`
 * strips a character set, and `str.split()` splits on Python whitespace.
 */

import { pyIsAlpha, pyLen, pySplitWhitespace, pyStrip } from "./pyString.ts";

/** `re.match("[a-f]+", word)`: anchored at the start only, so one leading a-f suffices. */
const HEX_START = /^[a-f]/;
/** `re.match(r"[a-f0-9]{32}", result)`, applied only when `result` has 32 code points. */
const HEX32 = /^[a-f0-9]{32}/;
/** The characters `key_split` strips from a non-alphabetic first word. */
const UNPLEASANT = "_'()\"";

/** The first code point of `s` (Python's `s[0]`), or undefined if `s` is empty. */
function firstCodePoint(s: string): string | undefined {
  const cp = s.codePointAt(0);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

/** The body of `key_split`'s `try:` block; returns undefined where Python would raise. */
function keySplitString(s: string): string | undefined {
  const words = s.split("-");
  const head = firstCodePoint(words[0]);
  if (head === undefined) return undefined; // words[0][0] -> IndexError
  let result = pyIsAlpha(head) ? words[0] : pyStrip(words[0].split(",")[0], UNPLEASANT);
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (pyIsAlpha(word) && !(pyLen(word) === 8 && HEX_START.test(word))) {
      result += `-${word}`;
    } else {
      break;
    }
  }
  if (pyLen(result) === 32 && HEX32.test(result)) return "data";
  const first = firstCodePoint(result);
  if (first === undefined) return undefined; // result[0] -> IndexError
  if (first === "<") {
    const parts = pySplitWhitespace(pyStrip(result, "<>"));
    if (parts.length === 0) return undefined; // .split()[0] -> IndexError
    const dotted = parts[0].split(".");
    result = dotted[dotted.length - 1];
  }
  return result;
}

/**
 * dask's `key_split`: the name prefix of a task key.
 *
 * A tuple key (array) uses its first element; words after the first `-` are
 * kept while alphabetic and not 8-letter hex-looking tokens; a 32-hex-digit
 * name becomes `"data"`; `"<module.cls object at 0x..>"` becomes `"cls"`.
 * Anything the reference would fail on (null, empty strings, non-string tuple
 * heads, ...) gives `"Other"`.
 */
export function keySplit(key: string | readonly unknown[] | null | undefined): string {
  let s: unknown = key;
  if (Array.isArray(s)) s = s[0];
  if (typeof s !== "string") return "Other";
  return keySplitAscii(s) ?? keySplitString(s) ?? "Other";
}

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

const DASH = 45;

/**
 * The common case without allocating: a key that starts with an ASCII letter and whose
 * words up to the first non-alphabetic one are ASCII. Returns undefined for anything
 * else, which the general port handles.
 */
function keySplitAscii(s: string): string | undefined {
  const n = s.length;
  if (n === 0 || !isAsciiLetter(s.charCodeAt(0))) return undefined;
  let end = 1;
  while (end < n) {
    const c = s.charCodeAt(end);
    if (c === DASH) break;
    if (c > 127) return undefined;
    end++;
  }
  // s[end] is a dash (or the end): try to extend the prefix word by word.
  while (end < n) {
    let j = end + 1;
    while (j < n) {
      const c = s.charCodeAt(j);
      if (c === DASH) break;
      if (c > 127) return undefined;
      if (!isAsciiLetter(c)) {
        j = -1;
        break;
      }
      j++;
    }
    const len = j - end - 1;
    // Not alphabetic (or empty): the prefix ends here.
    if (j < 0 || len === 0) break;
    // An 8-letter word starting with a-f is taken for a hex token.
    const first = s.charCodeAt(end + 1);
    if (len === 8 && first >= 97 && first <= 102) break;
    end = j;
  }
  const result = end === n ? s : s.slice(0, end);
  if (end === 32 && HEX32.test(result)) return "data";
  return result;
}
