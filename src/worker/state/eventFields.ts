/**
 * The checks an event's constructor makes of the fields it is given. The seed's
 * dataclasses take anything and fail, if at all, deep in a handler (`'NoneType' object
 * is not iterable`) or never: a string priority, `nbytes: {x: "big"}` or a missing key
 * would be carried along and corrupt the state. TypeScript callers get these checks
 * from the types; JavaScript callers, or values that went through `as`, do not. A
 * failed check is a TypeError naming the event class and the field.
 *
 * Only the shape is checked (a string, a number, a list of strings, ...), never what
 * the seed decides by handling the event: a negative resource, an unknown key or a
 * task that depends on itself is the state machine's business.
 */

import { showValue } from "../../util/showValue.ts";
import * as shape from "../../util/valueShapes.ts";

// The shapes and the words for a bad value are the Dask dict codec's (`valueShapes.ts`).

/** Throws the TypeError saying that `cls`'s `field` is not what it must be. */
export function badField(cls: string, field: string, expected: string, got: unknown): never {
  throw new TypeError(`${cls}: ${field} must be ${expected}, got ${shape.describeValue(got)}`);
}

/** `f`, the object of fields a constructor was given. */
export function checkFieldsObject(cls: string, f: unknown): void {
  if (!shape.isRecord(f)) {
    throw new TypeError(`${cls}: expected an object of fields, got ${shape.describeValue(f)}`);
  }
}

export function checkString(cls: string, field: string, v: unknown): void {
  if (!shape.isString(v)) badField(cls, field, "a string", v);
}

export function checkStringOrNull(cls: string, field: string, v: unknown): void {
  if (!shape.isStringOrNull(v)) badField(cls, field, "a string or null", v);
}

/** Any number: the seed's floats may be NaN or infinite, and so may these. */
export function checkNumber(cls: string, field: string, v: unknown): void {
  if (!shape.isNumber(v)) badField(cls, field, "a number", v);
}

export function checkNumberOrNull(cls: string, field: string, v: unknown): void {
  if (!shape.isNumberOrNull(v)) badField(cls, field, "a number or null", v);
}

export function checkInteger(cls: string, field: string, v: unknown): void {
  if (!shape.isInteger(v)) badField(cls, field, "an integer", v);
}

export function checkBoolean(cls: string, field: string, v: unknown): void {
  if (!shape.isBoolean(v)) badField(cls, field, "true or false", v);
}

/** A list of keys (a string is not one, though Python would iterate its characters). */
export function checkKeyList(cls: string, field: string, v: unknown): void {
  if (!shape.isStringList(v)) badField(cls, field, "a list of keys (strings)", v);
}

/**
 * A priority: a list of numbers. NaN is taken, as the seed and the Dask dict codec take
 * it, though Python orders a tuple holding NaN in a way the heaps do not follow (`Priority`).
 */
export function checkPriority(cls: string, field: string, v: unknown): void {
  if (!shape.isNumberList(v)) badField(cls, field, "a list of numbers", v);
}

/** An object (annotations), not a list: what the Dask dict codec takes for a dict. */
export function checkRecord(cls: string, field: string, v: unknown): void {
  if (!shape.isRecord(v)) badField(cls, field, "an object", v);
}

/**
 * A `MapLike`: a Map with string keys or a plain object, each value passing `valueOk`
 * (`expected` says what a value must be).
 */
export function checkMapLike(
  cls: string,
  field: string,
  m: unknown,
  valueOk: (v: unknown) => boolean,
  expected: string,
): void {
  if (m instanceof Map) {
    for (const k of m.keys()) {
      if (!shape.isString(k)) badField(cls, `${field}'s keys`, "strings", k);
    }
  } else if (!shape.isRecord(m)) {
    badField(cls, field, "a Map or a plain object", m);
  }
  const bad = shape.entryNotOf(m, valueOk);
  if (bad) badField(cls, `${field}[${showValue(bad[0])}]`, expected, bad[1]);
}

/** A map of anything (values of GatherDepSuccessEvent and UpdateDataEvent). */
export const anyValue = (_v: unknown): boolean => true;

/** Holders in `whoHas`: a list of worker addresses. */
export const isHolderList = shape.isStringList;

/** A number in `nbytes` or `resourceRestrictions`. */
export { isNumber } from "../../util/valueShapes.ts";

/**
 * Passed to an event's constructor by code that has checked the fields already: an
 * event's `toLoggable` for its copy (made for every stimulus handled), and the worker's
 * decoder of scheduler messages, whose checks are stricter.
 */
export const FIELDS_CHECKED: unique symbol = Symbol("fields checked");
