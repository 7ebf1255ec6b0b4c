/**
 * Byte sizes in human notation: a port of `dask.utils.parse_bytes` (config
 * values such as `"4 GiB"` or `"100MB"`) and `dask.utils.format_bytes`
 * (memory sizes in logs and dashboards).
 */

import { pyStrip } from "./pyString.ts";

/** Python's `float.__repr__`/`str()` rule: scientific when the exponent is < -4 or >= 16. */
function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Number.POSITIVE_INFINITY) return "inf";
  if (x === Number.NEGATIVE_INFINITY) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // Both languages print the shortest round-tripping digits; only the layout differs.
  const [mantissa, expPart] = x.toExponential().split("e");
  const exp = Number(expPart);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? "-" : "+";
    const e = String(Math.abs(exp)).padStart(2, "0");
    return `${mantissa}e${sign}${e}`;
  }
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  let out: string;
  if (exp >= 0) {
    out =
      digits.length > exp + 1
        ? `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`
        : `${digits.padEnd(exp + 1, "0")}.0`;
  } else {
    out = `0.${"0".repeat(-exp - 1)}${digits}`;
  }
  return negative ? `-${out}` : out;
}

/** Python's `int(x)` for a float: truncate toward zero; NaN and infinities raise. */
function pyInt(x: number): number {
  if (Number.isNaN(x)) throw new Error("cannot convert float NaN to integer");
  if (!Number.isFinite(x)) throw new Error("cannot convert float infinity to integer");
  return Math.trunc(x) + 0; // + 0 turns -0 into 0, as Python ints have no sign of zero
}

/** Python's `str.isdigit` for one character (decimal digits of any script). */
const DIGIT = /\p{Nd}/u;
/** Python's `str.isalpha` for one character. */
const ALPHA = /^\p{L}$/u;
/** Python float literal syntax, including `_` between digits. */
const PY_FLOAT_NUMBER =
  /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
/** Python's special float spellings. */
const PY_FLOAT_SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

/**
 * Python's `float(str)`; undefined where Python raises ValueError.
 * Only ASCII digits are accepted (Python also accepts other scripts' digits).
 */
function pyFloat(text: string): number | undefined {
  const t = pyStrip(text);
  if (PY_FLOAT_NUMBER.test(t)) return Number(t.replaceAll("_", ""));
  const special = PY_FLOAT_SPECIAL.exec(t);
  if (special) {
    const v = special[2].toLowerCase() === "nan" ? Number.NaN : Number.POSITIVE_INFINITY;
    return special[1] === "-" ? -v : v;
  }
  return undefined;
}

/** dask's `byte_sizes` table, with its lower-cased, one-letter and no-"b" aliases. */
const BYTE_SIZES: ReadonlyMap<string, number> = (() => {
  const base: [string, number][] = [
    ["kB", 10 ** 3],
    ["MB", 10 ** 6],
    ["GB", 10 ** 9],
    ["TB", 10 ** 12],
    ["PB", 10 ** 15],
    ["KiB", 2 ** 10],
    ["MiB", 2 ** 20],
    ["GiB", 2 ** 30],
    ["TiB", 2 ** 40],
    ["PiB", 2 ** 50],
    ["B", 1],
    ["", 1],
  ];
  const sizes = new Map<string, number>(base.map(([k, v]) => [k.toLowerCase(), v]));
  for (const [k, v] of [...sizes]) if (k && !k.includes("i")) sizes.set(k[0], v);
  for (const [k, v] of [...sizes]) if (k.includes("i")) sizes.set(k.slice(0, -1), v);
  return sizes;
})();

/**
 * dask's `parse_bytes`: a byte count from a number or a string such as
 * `"100 MB"`, `"5.4kB"`, `"1kiB"`, `"1e6"` or `"MB"` (units are
 * case-insensitive; decimal and binary prefixes). Numbers are truncated to an
 * integer. Throws an Error with the reference's ValueError message
 * (`Could not interpret 'foos' as a byte unit`, `... as a number`).
 */
export function parseBytes(s: number | string): number {
  if (typeof s === "number") return pyInt(s);
  const { prefix, suffix } = byteSizeParts(s);
  const n = pyFloat(prefix);
  if (n === undefined) throw new Error(`Could not interpret '${prefix}' as a number`);
  const multiplier = BYTE_SIZES.get(suffix.toLowerCase());
  if (multiplier === undefined) throw new Error(`Could not interpret '${suffix}' as a byte unit`);
  return pyInt(n * multiplier);
}

/** parse_bytes' split of a size into its number's text and its unit's. */
function byteSizeParts(s: string): { prefix: string; suffix: string } {
  s = s.replaceAll(" ", "");
  const chars = Array.from(s); // code points, like Python indexing
  if (!chars.some((c) => DIGIT.test(c))) chars.unshift("1");
  let i = chars.length - 1;
  for (; i >= 0; i--) {
    if (!ALPHA.test(chars[i])) break;
  }
  const index = i + 1;
  const prefix = chars.slice(0, index).join("");
  const suffix = chars.slice(index).join("");
  return { prefix, suffix };
}

/**
 * Whether a size parseBytes reads names a whole number of bytes, computed
 * exactly (in decimal, not in floating point): `"1.5kB"` and `"0.5KiB"` do,
 * `"1.5"` and `"1.1KiB"` (1126.4) do not, which parse_bytes would truncate (to
 * 1 byte and 1126). False for what parseBytes refuses, and for inf and nan.
 */
export function isWholeByteSize(s: string): boolean {
  const { prefix, suffix } = byteSizeParts(s);
  const multiplier = BYTE_SIZES.get(suffix.toLowerCase());
  const number = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(
    pyStrip(prefix).replaceAll("_", ""),
  );
  if (multiplier === undefined || number === null || pyFloat(prefix) === undefined) return false;
  const [, whole, fraction = "", exponent = "0"] = number;
  const digits = BigInt(`0${whole}${fraction}`) * BigInt(multiplier);
  const shift = Number(exponent) - fraction.length; // value = digits × 10^shift
  if (shift >= 0 || digits === 0n) return true;
  // More tens to divide by than digits to divide: a fraction (and no huge 10^n to build).
  if (-shift > digits.toString().length) return false;
  return digits % 10n ** BigInt(-shift) === 0n;
}

/** Python's `f"{x:.2f}"`: like `toFixed(2)` but exact ties round half to even. */
function pyFixed2(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const ax = Math.abs(x);
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (ax >= 2 ** 53) return `${sign}${BigInt(ax).toString()}.00`; // an integer; toFixed would go exponential
  // toFixed rounds exact ties up; Python rounds them to even. Exact digits tell a tie apart.
  const exact = ax.toFixed(100);
  const dot = exact.indexOf(".");
  const isTie = exact[dot + 3] === "5" && /^0*$/.test(exact.slice(dot + 4));
  if (!isTie) return sign + ax.toFixed(2);
  const truncated = exact.slice(0, dot + 3);
  const lastDigit = Number(truncated[truncated.length - 1]);
  if (lastDigit % 2 === 0) return sign + truncated;
  return sign + (Number(truncated) + 0.01).toFixed(2);
}

/** format_bytes' units, largest first, with their sizes. */
const BYTE_UNITS: readonly (readonly [string, number])[] = [
  ["Pi", 2 ** 50],
  ["Ti", 2 ** 40],
  ["Gi", 2 ** 30],
  ["Mi", 2 ** 20],
  ["ki", 2 ** 10],
];

/**
 * dask's `format_bytes`: a human-readable size with binary units and two
 * decimals, switching to a unit from 0.9 of it (`1 B`, `1.21 kiB`,
 * `0.98 kiB` for 1000, `11.77 MiB`, `1.10 PiB`).
 */
export function formatBytes(n: number): string {
  for (const [prefix, k] of BYTE_UNITS) {
    if (n >= k * 0.9) return `${pyFixed2(n / k)} ${prefix}B`;
  }
  return `${Number.isInteger(n) ? BigInt(n).toString() : pyFloatRepr(n)} B`;
}
