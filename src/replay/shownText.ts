/**
 * Strings a dump or a user gives (addresses, keys, stimulus ids, a version) as
 * they may be printed: a control character in one could break a report's lines
 * or send escape sequences to the terminal.
 */

/** `s` as it is, or quoted (see {@link quoted}) when it holds a control character. */
export function shown(s: string): string {
  return hasControl(s) ? quoted(s) : s;
}

/** `s` quoted as JSON, with every control character escaped. */
export function quoted(s: string): string {
  // JSON.stringify escapes C0 controls only: the C1 ones (U+0080–U+009F, CSI among
  // them) and the line separators are escaped here.
  let out = "";
  for (const ch of JSON.stringify(s)) {
    out += hasControl(ch) ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}` : ch;
  }
  return out;
}

function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}
