/**
 * Typed reading of the fields of a decoded Dask dict, with errors that name the
 * object and the field instead of a TypeError deep in the state machine.
 */

import {
  describeValue,
  entryNotOf,
  isBoolean,
  isNumber,
  isNumberList,
  isNumberOrNull,
  isRecord,
  isString,
  isStringList,
  isStringOrNull,
  type Shape,
} from "../../util/valueShapes.ts";

/** A Dask dict (event, instruction, config) that does not have the expected shape. */
export class DaskDictError extends Error {
  override name = "DaskDictError";
}

/** A decoded Dask dict, before its fields are read. */
export type Dict = Record<string, unknown>;

function isSafeInteger(v: unknown): v is number {
  return Number.isSafeInteger(v);
}

/** An object that is not a list: the shape of every Dask dict. */
export function isDict(v: unknown): v is Dict {
  return isRecord(v);
}

function isDictOrNull(v: unknown): v is Dict | null {
  return v === null || isRecord(v);
}

/**
 * Reads the fields of one dict; `where` names it in errors (e.g. "ComputeTaskEvent").
 * The shapes are the event constructors' (`valueShapes.ts`), so that whatever this
 * decodes, they take.
 */
export class FieldReader {
  constructor(
    readonly d: Dict,
    readonly where: string,
  ) {}

  fail(field: string, expected: string, got: unknown): never {
    throw new DaskDictError(
      `${this.where}.${field}: expected ${expected}, got ${describeValue(got)}`,
    );
  }

  has(field: string): boolean {
    return field in this.d;
  }

  /**
   * Require each of `fields` present, whatever its value (null included): Dask's
   * events carry every field of their dataclass, and `from_dict` fails without one.
   */
  present(...fields: readonly string[]): void {
    for (const field of fields) {
      if (!(field in this.d)) this.fail(field, "a value (the field is missing)", undefined);
    }
  }

  raw(field: string): unknown {
    if (!(field in this.d)) this.fail(field, "a value (the field is missing)", undefined);
    return this.d[field];
  }

  str(field: string): string {
    return this.required(field, isString, "a string");
  }

  strOrNull(field: string): string | null {
    return this.optional(field, isStringOrNull, "a string or null");
  }

  num(field: string): number {
    return this.required(field, isNumber, "a number");
  }

  /** A number where null means infinity (FORMAT.md). */
  numOrInf(field: string): number {
    const v = this.required(field, isNumberOrNull, "a number or null (infinity)");
    return v ?? Number.POSITIVE_INFINITY;
  }

  numOrNull(field: string): number | null {
    return this.optional(field, isNumberOrNull, "a number or null");
  }

  int(field: string): number {
    // Beyond 2^53 a JSON number is rounded as it is read: two run_ids would compare equal.
    return this.required(field, isSafeInteger, "an integer of at most 2^53 − 1 in size");
  }

  bool(field: string): boolean {
    return this.required(field, isBoolean, "true or false");
  }

  strList(field: string): string[] {
    return this.required(field, isStringList, "a list of strings");
  }

  intList(field: string): number[] {
    return this.required(field, isNumberList, "a list of numbers");
  }

  dict(field: string): Dict {
    return this.required(field, isDict, "an object");
  }

  dictOrNull(field: string): Dict | null {
    return this.optional(field, isDictOrNull, "an object or null");
  }

  /** `{key: [worker, ...]}` */
  whoHas(field: string): Map<string, string[]> {
    return this.mapOf(field, isStringList, "a list of worker addresses");
  }

  /** `{key: number}` */
  numMap(field: string): Map<string, number> {
    return this.mapOf(field, isNumber, "a number");
  }

  /** The field, which must be present and of `shape` (`expected` names it in errors). */
  private required<T>(field: string, shape: Shape<T>, expected: string): T {
    const v = this.raw(field);
    if (!shape(v)) this.fail(field, expected, v);
    return v;
  }

  /** The field of `shape`, or null when it is missing. */
  private optional<T>(field: string, shape: Shape<T | null>, expected: string): T | null {
    const v = this.d[field];
    if (v === undefined) return null;
    if (!shape(v)) this.fail(field, expected, v);
    return v;
  }

  /** `{key: value}` as a Map, every value of `shape`. */
  private mapOf<T>(field: string, shape: Shape<T>, expected: string): Map<string, T> {
    const d = this.dict(field);
    const bad = entryNotOf(d, shape);
    if (bad) this.fail(`${field}[${JSON.stringify(bad[0])}]`, expected, bad[1]);
    return new Map(Object.entries(d) as [string, T][]);
  }
}
