/**
 * Errors for unreadable dumps: {@link DumpFormatError}, the path of the bad field
 * inside the dump, and {@link Ctx}, the checked reads that fail with both.
 */

import { cutText } from "../../util/cutText.ts";
import type { DumpList, DumpObject, DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/**
 * Thrown for any dump that cannot be read: an unreadable file, an unknown
 * extension, truncated or corrupt gzip, data that is not msgpack/YAML, or a
 * structure that is not a cluster dump. The message names the file and, when
 * the problem is inside the data, the path of the bad field, e.g.
 * `dump.msgpack.gz: workers["tcp://127.0.0.1:1234"].stimulus_log[3]: expected an object, got null`.
 */
export class DumpFormatError extends Error {
  override readonly name = "DumpFormatError";
  /** The file (or the source label given to {@link parseClusterDump}). */
  readonly file: string;
  /** Path of the bad field inside the dump, or null for file-level problems. */
  readonly path: string | null;
  /** What is wrong, without the file and path. */
  readonly reason: string;

  /** Builds the error; `options.cause` keeps the underlying error when there is one. */
  constructor(file: string, path: string | null, reason: string, options?: { cause?: unknown }) {
    super(`${file}: ${path ? `${path}: ` : ""}${reason}`, options);
    this.file = file;
    this.path = path;
    this.reason = reason;
  }
}

/** A path inside the dump, built lazily (rendered only for error messages). */
export interface PathNode {
  readonly parent: PathNode | null;
  /** A mapping key, a list index, or an already rendered prefix. */
  readonly seg: string | number | { readonly rendered: string };
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function child(parent: PathNode | null, seg: PathNode["seg"]): PathNode {
  return { parent, seg };
}

/** Renders a path as `workers["tcp://…"].stimulus_log[3].key`. */
export function renderPath(path: PathNode | null): string {
  const segs: PathNode["seg"][] = [];
  for (let p = path; p; p = p.parent) segs.push(p.seg);
  segs.reverse();
  let out = "";
  for (const seg of segs) {
    if (typeof seg === "object") out += seg.rendered;
    else if (typeof seg === "number") out += `[${seg}]`;
    else if (IDENTIFIER.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** A short description of a value for error messages. */
export function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") {
    return `a string (${JSON.stringify(cutText(v, 40))})`;
  }
  if (typeof v === "number") return `the number ${String(v)}`;
  // Integers beyond 2**53 stay bigints (see normalizeTree): where a number is expected,
  // "expected a number, got the number N" would read as a contradiction.
  if (typeof v === "bigint") return `the integer ${String(v)}, beyond 2**53`;
  if (typeof v === "boolean") return `the boolean ${String(v)}`;
  if (Array.isArray(v)) return `a list of ${v.length} item${v.length === 1 ? "" : "s"}`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (typeof v === "object") return "an object";
  return typeof v;
}

/** Error reporting bound to one file. */
export class Ctx {
  constructor(readonly file: string) {}

  fail(path: PathNode | null, reason: string, cause?: unknown): never {
    const rendered = renderPath(path);
    throw new DumpFormatError(
      this.file,
      rendered || null,
      reason,
      cause === undefined ? undefined : { cause },
    );
  }

  object(v: DumpValue | undefined, path: PathNode | null): DumpObject {
    if (isDumpObject(v)) return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected an object)" : `expected an object, got ${describe(v)}`,
    );
  }

  list(v: DumpValue | undefined, path: PathNode | null): DumpList {
    if (Array.isArray(v)) return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a list)" : `expected a list, got ${describe(v)}`,
    );
  }

  string(v: DumpValue | undefined, path: PathNode | null): string {
    if (typeof v === "string") return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a string)" : `expected a string, got ${describe(v)}`,
    );
  }

  number(v: DumpValue | undefined, path: PathNode | null): number {
    if (typeof v === "number") return v;
    return this.fail(
      path,
      v === undefined ? "missing (expected a number)" : `expected a number, got ${describe(v)}`,
    );
  }

  /**
   * A number that is neither NaN nor infinite: a size, a time, a priority or an id,
   * which a Dask worker never records as either (a NaN size would fail the replay's
   * memory checks far from the field that caused it).
   */
  finiteNumber(v: DumpValue | undefined, path: PathNode | null): number {
    const n = this.number(v, path);
    if (Number.isFinite(n)) return n;
    return this.fail(path, `expected a finite number, got ${describe(n)}`);
  }

  /**
   * A count (a transition counter): an integer ≥ 0. Infinite, it read as a log
   * that lost its start; negative or fractional, as a counter that diverged.
   */
  count(v: DumpValue | undefined, path: PathNode | null): number {
    const n = this.number(v, path);
    if (Number.isSafeInteger(n) && n >= 0) return n;
    return this.fail(path, `expected an integer ≥ 0, got ${describe(n)}`);
  }

  optionalNumber(v: DumpValue | undefined, path: PathNode | null): number | null {
    if (v === undefined || v === null) return null;
    return this.number(v, path);
  }

  /** {@link finiteNumber}, or null for a field that is absent or null. */
  optionalFiniteNumber(v: DumpValue | undefined, path: PathNode | null): number | null {
    if (v === undefined || v === null) return null;
    return this.finiteNumber(v, path);
  }

  optionalString(v: DumpValue | undefined, path: PathNode | null): string | null {
    if (v === undefined || v === null) return null;
    return this.string(v, path);
  }

  optionalBoolean(v: DumpValue | undefined, path: PathNode | null): boolean | null {
    if (v === undefined || v === null) return null;
    if (typeof v === "boolean") return v;
    return this.fail(path, `expected a boolean, got ${describe(v)}`);
  }
}
