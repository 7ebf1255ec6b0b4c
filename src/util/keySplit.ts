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
  return keySplitString(s) ?? "Other";
}
