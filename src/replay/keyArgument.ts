/** A task key typed on the command line as a Python tuple, in the form the dumps hold. */

import { parsePyStrLiteral, pyStr, scanPyStringLiteral } from "../protocol/clusterDump/pyRepr.ts";

type Literal = string | number | Literal[];

const NUMBER = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/;

/** Parses a tuple or list of string and number literals (nested) at `s[i]`; null if it is not one. */
function parseSequence(s: string, start: number): { value: Literal; end: number } | null {
  const close = s[start] === "(" ? ")" : s[start] === "[" ? "]" : null;
  if (close === null) return null;
  const items: Literal[] = [];
  let commas = 0;
  let i = start + 1;
  const skip = () => {
    while (s[i] === " ") i++;
  };
  skip();
  while (s[i] !== close) {
    const c = s[i];
    if (c === "(" || c === "[") {
      const inner = parseSequence(s, i);
      if (inner === null) return null;
      items.push(inner.value);
      i = inner.end;
    } else if (c === "'" || c === '"') {
      const end = scanPyStringLiteral(s, i);
      const text = end < 0 ? null : parsePyStrLiteral(s.slice(i, end));
      if (text === null) return null;
      items.push(text);
      i = end;
    } else {
      const m = NUMBER.exec(s.slice(i));
      if (m === null) return null;
      items.push(Number(m[0]));
      i += m[0].length;
    }
    skip();
    if (s[i] === ",") {
      commas++;
      i++;
      skip();
    } else if (s[i] !== close) {
      return null;
    }
  }
  // `('x')` is Python's 'x', not a tuple: only a comma makes one.
  if (close === ")" && items.length === 1 && commas === 0) return { value: items[0], end: i + 1 };
  return { value: items, end: i + 1 };
}

/**
 * The `str()` form the dumps hold (`('inc', 41)`) of a key typed as a Python tuple
 * or list however spaced and quoted (`('inc',41)`, `("inc", 41)`, `['inc', 41]`),
 * or null when `arg` is not such a literal or is already in that form. A key that
 * was a tuple in Python has no other way to be typed, and an exact spelling that
 * finds nothing read as "no record" of a task the dump holds.
 */
export function tupleKeyForm(arg: string): string | null {
  const parsed = parseSequence(arg, 0);
  if (parsed === null || parsed.end !== arg.length) return null;
  const form = pyStr(parsed.value);
  return form === null || form === arg ? null : form;
}
