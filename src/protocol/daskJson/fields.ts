/**
 * Typed reading of the fields of a decoded Dask dict, with errors that name the
 * object and the field instead of a TypeError deep in the state machine.
 */

import { showValue } from "../../util/showValue.ts";

/** A Dask dict (event, instruction, config) that does not have the expected shape. */
export class DaskDictError extends Error {
  override name = "DaskDictError";
}

export type Dict = Record<string, unknown>;

export function isDict(v: unknown): v is Dict {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return `a list (${showValue(v)})`;
  if (typeof v === "object") return `an object (${showValue(v)})`;
  return `${typeof v} ${showValue(v)}`;
}

/** Reads the fields of one dict; `where` names it in errors (e.g. "ComputeTaskEvent"). */
export class FieldReader {
  constructor(
    readonly d: Dict,
    readonly where: string,
  ) {}

  fail(field: string, expected: string, got: unknown): never {
    throw new DaskDictError(`${this.where}.${field}: expected ${expected}, got ${describe(got)}`);
  }

  has(field: string): boolean {
    return field in this.d;
  }

  raw(field: string): unknown {
    if (!(field in this.d)) this.fail(field, "a value (the field is missing)", undefined);
    return this.d[field];
  }

  str(field: string): string {
    const v = this.raw(field);
    if (typeof v !== "string") this.fail(field, "a string", v);
    return v;
  }

  strOrNull(field: string): string | null {
    const v = this.d[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== "string") this.fail(field, "a string or null", v);
    return v;
  }

  num(field: string): number {
    const v = this.raw(field);
    if (typeof v !== "number") this.fail(field, "a number", v);
    return v;
  }

  /** A number where null means infinity (FORMAT.md). */
  numOrInf(field: string): number {
    const v = this.raw(field);
    if (v === null) return Number.POSITIVE_INFINITY;
    if (typeof v !== "number") this.fail(field, "a number or null (infinity)", v);
    return v;
  }

  numOrNull(field: string): number | null {
    const v = this.d[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== "number") this.fail(field, "a number or null", v);
    return v;
  }

  int(field: string): number {
    const v = this.num(field);
    if (!Number.isInteger(v)) this.fail(field, "an integer", v);
    return v;
  }

  bool(field: string): boolean {
    const v = this.raw(field);
    if (typeof v !== "boolean") this.fail(field, "true or false", v);
    return v;
  }

  strList(field: string): string[] {
    const v = this.raw(field);
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
      this.fail(field, "a list of strings", v);
    }
    return v as string[];
  }

  intList(field: string): number[] {
    const v = this.raw(field);
    if (!Array.isArray(v) || !v.every((x) => typeof x === "number")) {
      this.fail(field, "a list of numbers", v);
    }
    return v as number[];
  }

  dict(field: string): Dict {
    const v = this.raw(field);
    if (!isDict(v)) this.fail(field, "an object", v);
    return v;
  }

  dictOrNull(field: string): Dict | null {
    const v = this.d[field];
    if (v === undefined || v === null) return null;
    if (!isDict(v)) this.fail(field, "an object or null", v);
    return v;
  }

  /** `{key: [worker, ...]}` */
  whoHas(field: string): Map<string, string[]> {
    const d = this.dict(field);
    const out = new Map<string, string[]>();
    for (const [k, v] of Object.entries(d)) {
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
        this.fail(`${field}[${JSON.stringify(k)}]`, "a list of worker addresses", v);
      }
      out.set(k, v as string[]);
    }
    return out;
  }

  /** `{key: number}` */
  numMap(field: string): Map<string, number> {
    const d = this.dict(field);
    const out = new Map<string, number>();
    for (const [k, v] of Object.entries(d)) {
      if (typeof v !== "number") this.fail(`${field}[${JSON.stringify(k)}]`, "a number", v);
      out.set(k, v);
    }
    return out;
  }
}
