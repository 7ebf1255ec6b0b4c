/**
 * Where in a text JSON.parse refused it, said as an editor shows it: line and
 * column. Node.js 20 says "at position 882" (a character count, for a file of
 * a thousand lines), or for the commonest slip, a trailing comma, nothing at
 * all: `Unexpected token ']', ..."[1, 2,]}" is not valid JSON`.
 */

/** A text longer than this is not searched for a place its error does not give: each try parses a prefix. */
const MAX_SEARCHED_CHARS = 8 * 2 ** 20;

/** The message of `err`, JSON.parse's refusal of `text`, with the line and column it is at when known. */
export function jsonErrorWithPlace(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const given = positionGiven(message);
  const at =
    given !== null
      ? given
      : /^Unexpected end of JSON input$/.test(message)
        ? text.length
        : firstBadChar(text);
  if (at === null) return message;
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
 * The index of the first character of `text` no JSON could go on with: the
 * end of the longest prefix that is JSON cut short, not JSON gone wrong
 * (found by halving: a prefix gone wrong stays wrong however long). Null
 * for a text too long to search, or one that parses.
 */
function firstBadChar(text: string): number | null {
  if (text.length > MAX_SEARCHED_CHARS || prefixSoFarRight(text, text.length)) return null;
  let right = 0; // a prefix so far right
  let wrong = text.length; // a prefix gone wrong
  while (wrong - right > 1) {
    const mid = Math.floor((right + wrong) / 2);
    if (prefixSoFarRight(text, mid)) right = mid;
    else wrong = mid;
  }
  // The prefix of `wrong` characters went wrong at its last one.
  return wrong - 1;
}

/** Whether the first `n` characters of `text` are JSON, or JSON cut short (more characters could make them JSON). */
function prefixSoFarRight(text: string, n: number): boolean {
  try {
    JSON.parse(text.slice(0, n));
    return true;
  } catch (err) {
    const message = (err as Error).message;
    if (message === "Unexpected end of JSON input") return true;
    // Node.js names the end itself as the place of some cut-short texts ("Unterminated string").
    const at = positionGiven(message);
    return at !== null && at >= n;
  }
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
