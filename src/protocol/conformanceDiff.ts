/**
 * How the conformance runner compares a replay with a recording, and how it says
 * where they differ: canonical JSON, and diffs that name the field and the
 * elements that differ, so that a one-key difference in a list of a hundred is
 * seen at once rather than lost in two long lines cut at the same place.
 */

import { cutText } from "../util/cutText.ts";
import { setOwnKey } from "../util/ownKey.ts";
import { type Dict, isDict } from "./daskJson/fields.ts";

/**
 * What the port's NaN and `undefined` become in canonical JSON: never equal to
 * anything a recording holds (JSON has neither; the recordings write infinity as
 * null, and nothing else as null that the port may leave NaN or undefined).
 */
const JS_NAN = "<JavaScript NaN>";
const JS_UNDEFINED = "<JavaScript undefined>";

/** Canonical JSON: keys sorted, Sets/Maps as lists/objects, ±Infinity as null. */
export function canonical(v: unknown): string {
  return JSON.stringify(normalize(v));
}

function normalize(v: unknown): unknown {
  if (v === undefined) return JS_UNDEFINED;
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? JS_NAN : null;
  if (Array.isArray(v)) return v.map(normalize);
  if (v instanceof Set) return [...v].map(normalize);
  if (v instanceof Map) return normalize(Object.fromEntries(v));
  if (isDict(v)) {
    const out: Dict = {};
    for (const k of Object.keys(v).sort()) setOwnKey(out, k, normalize(v[k]));
    return out;
  }
  return v;
}

/** Values longer than this are shown by their differences, not whole. */
const SHOWN_WHOLE = 160;
/** How many elements of a list's difference are named. */
const ELEMENTS_NAMED = 10;
/** How much of one value a diff line shows. */
const VALUE_CHARS = 300;

/** Paths where two JSON values differ, with both sides (at most `limit` lines). */
export function jsonDiff(
  expected: unknown,
  actual: unknown,
  path = "",
  out: string[] = [],
  limit = 20,
): string[] {
  if (out.length >= limit) return out;
  const e = normalize(expected);
  const a = normalize(actual);
  // Already normalized: canonical() would normalize the whole snapshot again, at every step.
  const ce = JSON.stringify(e);
  const ca = JSON.stringify(a);
  if (ce === ca) return out;
  if (isDict(e) && isDict(a)) {
    for (const k of new Set([...Object.keys(e), ...Object.keys(a)])) {
      if (!Object.hasOwn(a, k)) out.push(`${path}.${k}: expected ${shown(e[k])}, missing`);
      else if (!Object.hasOwn(e, k)) out.push(`${path}.${k}: unexpected ${shown(a[k])}`);
      else jsonDiff(e[k], a[k], `${path}.${k}`, out, limit);
      if (out.length >= limit) break;
    }
    return out;
  }
  const where = path || ".";
  if (Array.isArray(e) && Array.isArray(a) && ce.length + ca.length > 2 * SHOWN_WHOLE) {
    out.push(`${where}: ${listDifference(e, a)}`);
    return out;
  }
  out.push(`${where}: expected ${shown(e)}, got ${shown(a)}`);
  return out;
}

/** What is missing from `actual` and what it has besides, or where their order differs. */
function listDifference(expected: unknown[], actual: unknown[]): string {
  const { missing, extra } = multisetDifference(expected.map(canonical), actual.map(canonical));
  const sizes = `(expected ${expected.length} elements, got ${actual.length})`;
  if (missing.length === 0 && extra.length === 0) {
    const i = expected.findIndex((x, j) => canonical(x) !== canonical(actual[j]));
    return `the same ${expected.length} elements in another order: at [${i}] expected ${shown(
      expected[i],
    )}, got ${shown(actual[i])}`;
  }
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing ${named(missing)}`);
  if (extra.length > 0) parts.push(`unexpected ${named(extra)}`);
  return `${parts.join("; ")} ${sizes}`;
}

function named(canonicals: readonly string[]): string {
  const shownOnes = canonicals.slice(0, ELEMENTS_NAMED).map((c) => cutText(c, VALUE_CHARS));
  const more = canonicals.length - shownOnes.length;
  return `${shownOnes.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

function shown(v: unknown): string {
  return cutText(canonical(v), VALUE_CHARS);
}

/** The elements of `expected` that `actual` lacks and those it has besides, counting repeats. */
function multisetDifference(
  expected: readonly string[],
  actual: readonly string[],
): { missing: string[]; extra: string[] } {
  const remaining = new Map<string, number>();
  for (const x of actual) remaining.set(x, (remaining.get(x) ?? 0) + 1);
  const missing: string[] = [];
  for (const x of expected) {
    const n = remaining.get(x) ?? 0;
    if (n > 0) remaining.set(x, n - 1);
    else missing.push(x);
  }
  const extra: string[] = [];
  for (const [x, n] of remaining) for (let i = 0; i < n; i++) extra.push(x);
  return { missing, extra };
}

/**
 * How two lists of instructions, compared as multisets, differ. An expected
 * instruction and a got one of the same class for the same key (or peer) are
 * shown as one, by the fields that differ; the others whole.
 */
export function instructionDiff(expected: readonly Dict[], actual: readonly Dict[]): string[] {
  const byCanonical = new Map<string, Dict>();
  for (const d of [...expected, ...actual]) byCanonical.set(canonical(d), d);
  const { missing, extra } = multisetDifference(
    expected.map(canonical).sort(),
    actual.map(canonical).sort(),
  );
  const out: string[] = [];
  const unpaired: string[] = [];
  for (const m of missing) {
    const want = byCanonical.get(m) as Dict;
    const i = extra.findIndex((x) => sameSubject(want, byCanonical.get(x) as Dict));
    if (i < 0) {
      unpaired.push(m);
      continue;
    }
    const got = byCanonical.get(extra[i]) as Dict;
    extra.splice(i, 1);
    out.push(`~ ${subject(want)}: ${jsonDiff(want, got, "", [], 5).join("; ")}`);
  }
  return [
    ...out,
    ...unpaired.map((x) => `- expected ${cutText(x, 2 * VALUE_CHARS)}`),
    ...extra.map((x) => `+ got      ${cutText(x, 2 * VALUE_CHARS)}`),
  ];
}

/** Fields that say which task or peer an instruction is about. */
const SUBJECT_FIELDS = ["key", "worker"] as const;

function sameSubject(a: Dict, b: Dict): boolean {
  return a.cls === b.cls && SUBJECT_FIELDS.every((f) => canonical(a[f]) === canonical(b[f]));
}

function subject(d: Dict): string {
  const fields = SUBJECT_FIELDS.filter((f) => f in d).map((f) => `${f}=${shown(d[f])}`);
  return `${String(d.cls)}(${fields.join(", ")})`;
}

/**
 * An event for a report: its class, key and stimulus ID first (what a reader looks
 * for, and what a long event would otherwise push past the cut), then its other
 * fields, cut at `max` characters.
 */
export function eventLine(event: Dict, max = 2 * VALUE_CHARS): string {
  const { cls, key, stimulus_id: stimulusId, ...fields } = event;
  const named = [
    ...(key !== undefined ? [`key=${shown(key)}`] : []),
    ...(stimulusId !== undefined ? [`stimulus_id=${shown(stimulusId)}`] : []),
  ];
  return cutText(`${String(cls)}(${named.join(", ")}) ${canonical(fields)}`, max);
}
