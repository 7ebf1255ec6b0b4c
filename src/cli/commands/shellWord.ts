/**
 * A word of a command line printed for the user to run, quoted as a POSIX shell
 * reads it back: a Dask key (`('inc-1', 0)`) or a path with a space printed bare
 * was a syntax error, or other words, once pasted.
 */

import { shown } from "../../replay/shownText.ts";

/** Characters a shell word may hold unquoted. */
const PLAIN = /^[\w@%+=:,./-]+$/;

/**
 * `word` as is when the shell reads it so, else quoted: in single quotes, or in double
 * quotes when it holds a single one and nothing a shell expands there (a tuple key,
 * `"('inc-1', 0)"`); one with a control character as JSON.
 */
export function shellWord(word: string): string {
  if (PLAIN.test(word)) return word;
  const safe = shown(word);
  // Printed raw, a control character could drive the terminal: shown escaped instead.
  if (safe !== word) return safe;
  if (!word.includes("'")) return `'${word}'`;
  if (!/["$`\\!]/.test(word)) return `"${word}"`;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
