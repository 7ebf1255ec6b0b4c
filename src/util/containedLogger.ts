/**
 * A logger whose failures stay its own. Python's `logging` never lets a
 * handler's failure reach the caller (`Handler.handleError` prints "--- Logging
 * error ---" and goes on), and Dask's state handling relies on it. A pino
 * logger throws whatever its destination throws (a full disk, a closed file), a
 * hand-made one whatever its methods do: thrown from a log line in the middle
 * of a stimulus, a message being routed or a close, that left state half
 * changed and promises never settled.
 */

import { writeSync } from "node:fs";
import type { Logger } from "pino";
import { readableError, readableErrorFields, readSafely } from "./readSafely.ts";

/** Says that a logger failed, once; how is the caller's (stderr by default). */
export type LoggingErrorReport = (text: string) => void;

/** The failures of one logger given to weft and of its children. */
interface Failures {
  reported: boolean;
  readonly report: LoggingErrorReport;
}

/** pino's level methods, which a caller calls without checking that they exist. */
const LEVELS: ReadonlySet<PropertyKey> = new Set([
  "trace",
  "debug",
  "info",
  "warn",
  "error",
  "fatal",
  "silent",
]);

/** Loggers made here: contained already, so not wrapped again (a cluster's parts get its children). */
const contained = new WeakSet<object>();

/** The containment of each logger given, so that one given twice reports once. */
const containedOf = new WeakMap<object, object>();

/**
 * `logger` (a pino logger, a `CommLogger`: any object of log methods), except
 * that a call of any of its methods (a level's, `child`, `isLevelEnabled`, …)
 * that throws returns undefined instead; a child it makes is contained alike
 * (one whose making throws is the parent itself, so that its lines still go
 * somewhere). The first failure of a logger and its children is reported with
 * `report` (by default on stderr, as Python's "--- Logging error ---"), later
 * ones are not: a full disk would flood stderr with one report per line. A
 * logger contained already, or given before (whatever its `report` then), is
 * returned as it was: a logger passed to a scheduler and its workers reports once.
 */
export function containLogger<L extends object = Logger>(
  logger: L,
  report: LoggingErrorReport = toStderr,
): L {
  if (contained.has(logger)) return logger;
  const known = containedOf.get(logger);
  if (known !== undefined) return known as L;
  const safe = wrap(logger, { reported: false, report });
  containedOf.set(logger, safe);
  return safe;
}

function wrap<L extends object>(target: L, failures: Failures): L {
  // The methods handed out, each with the function it calls: pino replaces its level
  // methods when its level changes, and a stale one would keep the old level's.
  const methods = new Map<PropertyKey, { readonly of: unknown; readonly method: unknown }>();
  // A stand-in is proxied, not the logger: a frozen logger's methods could only be
  // handed out as they are (a Proxy's invariant), uncontained. What else is done to it
  // is done to the logger (a level set, a method replaced by a test's spy), whose
  // properties are told as configurable, as the stand-in has none of its own.
  const safe = new Proxy(Object.create(null) as L, {
    has: (_, prop) => Reflect.has(target, prop),
    set: (_, prop, value) => Reflect.set(target, prop, value),
    defineProperty: (_, prop, descriptor) => Reflect.defineProperty(target, prop, descriptor),
    deleteProperty: (_, prop) => Reflect.deleteProperty(target, prop),
    ownKeys: () => Reflect.ownKeys(target),
    getOwnPropertyDescriptor: (_, prop) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target, prop);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(target),
    get: (_, prop) => {
      let value: unknown;
      try {
        value = Reflect.get(target, prop);
      } catch (err) {
        failed(failures, `reading logger.${String(prop)}`, err);
        // A level or `child` is called next: a stand-in keeps that from throwing too.
        return missing(prop, safe);
      }
      if (typeof value !== "function") return missing(prop, safe) ?? value;
      const known = methods.get(prop);
      if (known?.of === value) return known.method;
      const f = value as (...args: unknown[]) => unknown;
      const method =
        prop === "child"
          ? (...args: unknown[]) => {
              try {
                return wrap(f.apply(target, args) as object, failures);
              } catch (err) {
                failed(failures, "logger.child()", err);
                return safe;
              }
            }
          : (...args: unknown[]) => {
              let result: unknown;
              try {
                result = f.apply(target, args);
              } catch (err) {
                return retried(f, target, prop, args, failures, err);
              }
              // An async method (the type allows one) rejecting was an unhandled rejection.
              if (result !== undefined) whenRejected(result, prop, failures);
              return result;
            };
      methods.set(prop, { of: value, method });
      return method;
    },
  });
  contained.add(safe);
  return safe;
}

/**
 * What stands for a method weft calls that the logger lacks or cannot give: a
 * level's writes nothing (a hand-made logger, a `CommLogger`, may have no
 * `debug`), `child` is the logger itself, and a logger that cannot tell its
 * level is taken to write them all; undefined for another property.
 */
function missing(prop: PropertyKey, safe: object): (() => unknown) | undefined {
  if (LEVELS.has(prop)) return () => undefined;
  if (prop === "child") return () => safe;
  if (prop === "isLevelEnabled") return () => true;
  return undefined;
}

/**
 * A log call that threw (`err`) made again with the error it logs made plain
 * (what of it can be read), as weft's callers did before the logger was
 * contained: pino reading an error whose getters throw (a task's, a plugin's
 * hostile value) is the value's failure, not the logger's, and the line still
 * goes out. Reported only if that fails too, or there is no error to blame.
 */
function retried(
  f: (...args: unknown[]) => unknown,
  target: object,
  prop: PropertyKey,
  args: readonly unknown[],
  failures: Failures,
  err: unknown,
): unknown {
  let last = err;
  const plain = LEVELS.has(prop) ? withPlainError(args) : null;
  if (plain !== null) {
    try {
      return f.apply(target, plain);
    } catch (again) {
      last = again;
    }
  }
  failed(failures, `logger.${String(prop)}()`, last);
  return undefined;
}

/** If `result` is a promise (a thenable), its rejection is a failure of the logger's. */
function whenRejected(result: unknown, prop: PropertyKey, failures: Failures): void {
  readSafely(
    () => {
      const then = (result as { then?: unknown } | null)?.then;
      if (typeof then === "function") {
        then.call(result, undefined, (err: unknown) =>
          failed(failures, `logger.${String(prop)}()`, err),
        );
      }
    },
    (why) => failed(failures, `logger.${String(prop)}()`, why),
  );
}

/** `args` of a log call with the error they log (alone, or as `err`) made plain; null if none. */
function withPlainError(args: readonly unknown[]): unknown[] | null {
  return readSafely(
    () => {
      const [first, ...rest] = args;
      if (first instanceof Error) return [readableError(first), ...rest];
      if (typeof first !== "object" || first === null || !("err" in first)) return null;
      return [{ ...first, err: readableError((first as { err: unknown }).err) }, ...rest];
    },
    () => null,
  );
}

function failed(failures: Failures, what: string, err: unknown): void {
  if (failures.reported) return;
  failures.reported = true;
  const { name, message, stack } = readableErrorFields(err);
  const trace = stack.includes(message) ? stack : `${name}: ${message}\n${stack}`;
  try {
    failures.report(
      `--- Logging error ---\n${what} threw: ${trace.trimEnd()}\n` +
        "weft goes on without this line; further failures of this logger are not reported.\n",
    );
  } catch {
    // Nowhere is left to say so; the program goes on, as Python's handleError does.
  }
}

/**
 * Written straight to file descriptor 2, synchronously: `process.stderr` would
 * answer a closed pipe with an 'error' event, uncaught unless someone listens.
 */
function toStderr(text: string): void {
  writeSync(2, text);
}
