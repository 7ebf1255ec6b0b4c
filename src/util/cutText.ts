/**
 * Where to cut `text` to keep at most `max` UTF-16 units without splitting a
 * surrogate pair: a lone half would turn into U+FFFD once encoded as UTF-8 (on
 * the wire, in a log file), and a cut emoji would show as a broken glyph.
 */
export function cutEnd(text: string, max: number): number {
  const end = Math.max(0, Math.min(max, text.length));
  if (end === 0 || end === text.length) return end;
  const last = text.charCodeAt(end - 1);
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
}

/**
 * `text` itself if it has at most `max` UTF-16 units; otherwise its first `max`
 * (one fewer rather than half a surrogate pair) followed by `mark`.
 */
export function cutText(text: string, max: number, mark = "…"): string {
  return text.length > max ? `${text.slice(0, cutEnd(text, max))}${mark}` : text;
}
