/**
 * dask's `parse_timedelta`: a duration as Dask's configuration and command
 * lines write it (`"1 hour"`, `"5m"`, `"300ms"`, `"1.5 h"`, `30`), in seconds.
 * A bare number is in `defaultUnit`. Unlike Dask's, `.5s` is half a second (Dask
 * reads 1.5 s), and `+2ms` is 2 ms (Dask refuses a plus sign).
 */

const UNITS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>([
    ["s", 1],
    ["ms", 1e-3],
    ["us", 1e-6],
    ["ns", 1e-9],
    ["m", 60],
    ["h", 3600],
    ["d", 86_400],
    ["w", 604_800],
  ]);
  const words: [string, number][] = [
    ["second", 1],
    ["minute", 60],
    ["hour", 3600],
    ["day", 86_400],
    ["week", 604_800],
    ["millisecond", 1e-3],
    ["microsecond", 1e-6],
    ["nanosecond", 1e-9],
  ];
  for (const [w, v] of words) {
    m.set(w, v);
    m.set(`${w}s`, v);
  }
  return m;
})();

/** The duration `s` in seconds; a clear error for what is not one. */
export function parseTimedelta(s: string | number, defaultUnit = "seconds"): number {
  if (typeof s === "number") {
    if (!Number.isFinite(s)) throw new RangeError(`not a duration: ${s}`);
    s = String(s);
  }
  if (typeof s !== "string") throw new TypeError(`not a duration: ${String(s)}`);
  let text = s.replaceAll(" ", "");
  if (text === "") throw new RangeError("not a duration: an empty text");
  // A unit alone is one of it ("h": an hour), as in Dask. Dask puts the 1 before
  // anything that does not begin with a digit, and read ".5h" as 1.5 hours.
  if (/^[a-zA-Z]/.test(text)) text = `1${text}`;
  let i = text.length;
  while (i > 0 && /[a-zA-Z]/.test(text[i - 1])) i--;
  const prefix = text.slice(0, i);
  const suffix = text.slice(i) || defaultUnit;
  // Python's float(): a plus sign, digits, a point, an exponent (no hex, no trailing
  // garbage). Dask's 1 put before what does not begin with a digit makes "+1" "1+1",
  // which it refuses; weft's other numbers (counts, sizes) take the sign, and so do these.
  if (!/^\+?[0-9]*\.?[0-9]*(e[+-]?[0-9]+)?$/i.test(prefix) || !/[0-9]/.test(prefix)) {
    throw new RangeError(`not a duration: ${JSON.stringify(s)}`);
  }
  const multiplier = UNITS.get(suffix.toLowerCase());
  if (multiplier === undefined) {
    throw new RangeError(
      `not a duration: ${JSON.stringify(s)}: invalid time unit ${JSON.stringify(suffix)} (valid: ${[...UNITS.keys()].join(", ")})`,
    );
  }
  return Number(prefix) * multiplier;
}
