/**
 * `v` as JSON for an error message, at most `max` characters. Never throws: input that
 * JSON cannot hold (a BigInt, a cycle, a symbol, an object without a prototype whose
 * `toJSON` misbehaves) is shown as well as it can be, so that a decoding error is
 * never replaced by a TypeError from building its message.
 */
export function showValue(v: unknown, max = 60): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x));
  } catch {
    s = undefined;
  }
  if (s === undefined) {
    try {
      s = typeof v === "symbol" ? v.toString() : String(v);
    } catch {
      s = Object.prototype.toString.call(v);
    }
  }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
