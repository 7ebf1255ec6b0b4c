/**
 * The shapes of field values that both the event constructors (`eventFields.ts`) and the
 * Dask dict codec (`protocol/daskJson/fields.ts`) check, and how both describe a value
 * that has the wrong one. Sharing them keeps the two in step: the constructors must take
 * whatever the codec decodes, or a decoding error would surface as a constructor's
 * TypeError instead of the codec's DaskDictError. Each side keeps its own error class and
 * field names; only the shapes and the words for the bad value are common.
 *
 * Lists are checked element by element (`every`): a string is not a list of keys, though
 * Python would iterate its characters.
 */

import { showValue } from "./showValue.ts";

/** A test of one shape, narrowing the value's type when it passes. */
export type Shape<T> = (v: unknown) => v is T;

export function isString(v: unknown): v is string {
  return typeof v === "string";
}

export function isStringOrNull(v: unknown): v is string | null {
  return v === null || typeof v === "string";
}

/** Any number: the seed's floats may be NaN or infinite, and so may these. */
export function isNumber(v: unknown): v is number {
  return typeof v === "number";
}

export function isNumberOrNull(v: unknown): v is number | null {
  return v === null || typeof v === "number";
}

/** A number without a fractional part (NaN and ±Infinity are not integers). */
export function isInteger(v: unknown): v is number {
  return Number.isInteger(v);
}

export function isBoolean(v: unknown): v is boolean {
  return typeof v === "boolean";
}

// The lists' element tests are arrows made here, not `isString` and `isNumber`: V8 inlines
// these into `every` and not those (a checked ComputeTaskEvent took 15% longer to build).
export function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** A list of numbers, NaN included (a priority may hold one, as the seed's may). */
export function isNumberList(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === "number");
}

/** An object that is not a list: what a decoded JSON dict is. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The first entry of `m` (a Map, or an object's own enumerable string keys) whose value
 * fails `valueOk`, as `[key, value]`; undefined when every value passes. A map of keys to
 * X is a {@link isRecord} or Map with no such entry; the entry is what an error names.
 */
export function entryNotOf(
  m: ReadonlyMap<unknown, unknown> | Record<string, unknown>,
  valueOk: (v: unknown) => boolean,
): [unknown, unknown] | undefined {
  if (m instanceof Map) {
    for (const [k, v] of m) if (!valueOk(v)) return [k, v];
    return undefined;
  }
  const record = m as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    if (!valueOk(record[k])) return [k, record[k]];
  }
  return undefined;
}

/**
 * A value that failed a shape check, for the end of an error message ("…, got number 5"):
 * its kind, then the value as JSON (`showValue`, so never throwing and never long).
 */
export function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return `a list (${showValue(v)})`;
  if (typeof v === "object") return `an object (${showValue(v)})`;
  // showValue quotes a BigInt ("12n"), which would read as a string here.
  if (typeof v === "bigint") return `bigint ${v}n`;
  return `${typeof v} ${showValue(v)}`;
}
