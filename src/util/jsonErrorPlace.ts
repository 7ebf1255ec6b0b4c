/**
 * Where in a text JSON.parse refused it, said as an editor shows it: line and
 * column. Node.js 20 says "at position 882" (a character count, for a file of
 * a thousand lines), or for the commonest slip, a trailing comma, nothing at
 * all: `Unexpected token ']', ..."[1, 2,]}" is not valid JSON`.
 */

import { jsonFirstBadChar } from "./jsonFirstBadChar.ts";

/** The message of `err`, JSON.parse's refusal of `text`, with the line and column it is at when known. */
export function jsonErrorWithPlace(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const given = positionGiven(message);
  const at =
    given !== null
      ? given
      : /^Unexpected end of JSON input$/.test(message)
        ? text.length
        : jsonFirstBadChar(text);
  // -1: the text parses, and the error was another's.
  if (at === null || at < 0) return message;
  const { line, column } = lineAndColumn(text, at);
  return `${message} (line ${line}, column ${column})`;
}

/** The 1-based line and column of the character at `index` of `text` (past its end: just after it). */
export function lineAndColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(index, text.length);
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: end - lineStart + 1 };
}

/**
 * The position JSON.parse's `message` ends with, or null. Only at its end: an
 * "Unexpected token" message quotes the text around the token, which may say
 * "at position 1" itself (a task's argument), read as the place before.
 */
function positionGiven(message: string): number | null {
  const given = / at position (\d+)$/.exec(message);
  return given !== null ? Number(given[1]) : null;
}
