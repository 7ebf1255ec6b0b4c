/**
 * `v` as JSON for an error message (a number as itself, NaN and ±Infinity included), at
 * most `max` characters. Never throws: input that JSON cannot hold (a BigInt, a cycle, a
 * symbol, an object without a prototype whose `toJSON` misbehaves) is shown as well as it
 * can be, so that a decoding error is never replaced by a TypeError from building its
 * message.
 */

import { cutText } from "./cutText.ts";

export function showValue(v: unknown, max = 60): string {
  let s: string | undefined;
  try {
    s = typeof v === "number" ? String(v) : JSON.stringify(v, jsonOf);
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
  return cutText(s, max);
}

/** BigInts as `"12n"`; NaN and ±Infinity by name, where JSON would print null. */
function jsonOf(_key: string, x: unknown): unknown {
  if (typeof x === "bigint") return `${x}n`;
  if (typeof x === "number" && !Number.isFinite(x)) return String(x);
  return x;
}
