/**
 * Numbers as options and environment variables spell them, in decimal: `12`, `-1.5`,
 * `.5`, `1e3`. `Number(text)` also reads `0x10`, `0b11` and `0o7` (16, 3 and 7),
 * ignores padding (`" 5 "`), and reads `""` and blanks as 0: a typo would run.
 */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** The number `text` spells in decimal (`12`, `-1.5`, `.5`, `1e3`); NaN for anything else. */
export function parseDecimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}
