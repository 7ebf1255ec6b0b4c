/**
 * The pieces of weft's server-rendered HTML pages (the scheduler's and the
 * workers' `/status`, the performance report): escaping, tables whose cells
 * are text or markup, and usage bars. No scripts: the pages open anywhere.
 */

import { cutText } from "./cutText.ts";

/** `&<>"'` escaped, for text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Markup a table cell holds as it is (a chart); any other cell is text, escaped. */
export class Html {
  constructor(readonly markup: string) {}
}

/**
 * Text longer than this wraps anywhere ({@link wrappingText}); shorter text,
 * which cannot widen a table past the window, stays plain.
 */
const WRAPPED_CHARS = 40;
/** The most characters of a text a cell shows; all of it is on hover. */
const SHOWN_CHARS = 200;

/**
 * A key, prefix, name or address as a cell. Keys have no spaces to wrap at:
 * a long one would widen its table past the window, so it wraps anywhere;
 * past {@link SHOWN_CHARS} it is cut, all of it on hover. (Plain cells keep
 * the markup that scrapers of the page, and tests, match.)
 */
export function wrappingText(text: string): string | Html {
  if (text.length <= WRAPPED_CHARS) return text;
  let shown = text;
  let title = "";
  if (text.length > SHOWN_CHARS) {
    shown = cutText(text, SHOWN_CHARS);
    title = ` title="${escapeHtml(text)}"`;
  }
  return new Html(`<span style="overflow-wrap:anywhere"${title}>${escapeHtml(shown)}</span>`);
}

/** A table; `none` in one cell when there are no rows. */
export function htmlTable(
  head: readonly string[],
  rows: readonly (readonly (string | Html)[])[],
): string {
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const cell = (c: string | Html) =>
    c instanceof Html ? `<td class="chart">${c.markup}</td>` : `<td>${escapeHtml(c)}</td>`;
  const body =
    rows.length === 0
      ? `<tr><td colspan="${head.length}">none</td></tr>`
      : rows.map((r) => `<tr>${r.map(cell).join("")}</tr>`).join("\n");
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A percentage for a CSS width, rounded to what a screen shows. */
export function cssPercent(part: number, whole: number): string {
  return `${whole <= 0 ? 0 : Math.round((part / whole) * 10_000) / 100}%`;
}

/** `used` of `limit` as a bar (orange beyond 80%, full and red beyond the limit); empty without a limit. */
export function usageBar(used: number, limit: number | null, text: string): string {
  if (limit === null || limit <= 0) return "";
  const colour = used > limit ? "#d62728" : used > 0.8 * limit ? "#ff7f0e" : "#3b7dd8";
  const width = cssPercent(Math.min(used, limit), limit);
  return `<span class="bar" title="${escapeHtml(text)}"><span style="width:${width};background:${colour}"></span></span>`;
}

/**
 * A whole page: `title` as its title and first heading (`heading`, if given),
 * then `body` (markup); with `refreshSeconds`, the browser reloads it that often.
 */
export function htmlPage(
  title: string,
  body: string,
  options: { readonly refreshSeconds?: number; readonly heading?: string } = {},
): string {
  const { refreshSeconds, heading = title } = options;
  const refresh =
    refreshSeconds === undefined ? "" : `<meta http-equiv="refresh" content="${refreshSeconds}">`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">${refresh}
<title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style>
</head><body>
<h1>${escapeHtml(heading)}</h1>
${body}</body></html>
`;
}

/** The style sheet the pages share. */
export const PAGE_STYLE =
  "body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}" +
  "th,td{border:1px solid #ccc;padding:2px 8px;text-align:right}" +
  "th:first-child,td:first-child,td.chart{text-align:left}" +
  ".bar{display:inline-flex;width:160px;height:12px;background:#f4f4f4;vertical-align:middle}" +
  ".bar span{height:100%}.key{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px}" +
  ".legend,.note{color:#555}svg.stream{display:block;margin-bottom:.5em}";
