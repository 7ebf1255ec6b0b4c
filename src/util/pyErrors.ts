/**
 * Errors that mirror the Python exceptions the reference raises, so that a port
 * that fails at the same point fails with the same kind of error.
 */

/** A missing key or element: Python's `KeyError` (`dict[key]`, `set.remove`). */
export class KeyError extends Error {
  override name = "KeyError";
  /** The key (or element) that was missing. */
  readonly key: unknown;
  constructor(key: unknown, message?: string) {
    // The key alone, as Python's str(KeyError(k)): the name says it is a KeyError.
    super(message ?? (typeof key === "string" ? JSON.stringify(key) : String(key)));
    this.key = key;
  }
}

/** A failed internal consistency check: Python's `AssertionError`. */
export class AssertionError extends Error {
  override name = "AssertionError";
}

/** Python's `RuntimeError`: a state the reference refuses to handle. */
export class RuntimeError extends Error {
  override name = "RuntimeError";
}

/**
 * Python's `TypeError` where the reference raises one (a transition function
 * called with the wrong number of arguments). A `TypeError` of JavaScript's own
 * (a bug reading a property of undefined) is not one of these, so that a
 * conformance vector expecting the reference's can tell the two apart.
 */
export class PyTypeError extends TypeError {
  override name = "TypeError";
}

/**
 * Python's `assert cond, message`. The reference's asserts always run, so do these.
 * Without a message, the error names the function and line of the failed check,
 * as Python's traceback would show its source line.
 */
export function assert(cond: unknown, message?: string | (() => string)): asserts cond {
  // Kept this small so that V8 inlines it into the hot paths that call it.
  if (!cond) throw assertionError(message);
}

function assertionError(message: string | (() => string) | undefined): AssertionError {
  if (typeof message === "function") return new AssertionError(message());
  return new AssertionError(message ?? `assertion failed${callerOfAssert()}`);
}

/** ` in fn (file.ts:line)` for the code that called {@link assert}, or "" if unknown. */
function callerOfAssert(): string {
  // Frames: this function, assertionError, assert, then its caller.
  const frame = new Error().stack?.split("\n")[4]?.trim();
  if (frame === undefined) return "";
  const m = /^at (?:(.+?) \()?(?:.*[/\\])?([^/\\]+?):(\d+):\d+\)?$/.exec(frame);
  if (m === null) return "";
  const [, fn, file, line] = m;
  return fn === undefined ? ` at ${file}:${line}` : ` in ${fn} (${file}:${line})`;
}

/** Python's `set.remove(value)`: KeyError when the value is absent. */
export function setRemove<T>(set: Set<T>, value: T): void {
  if (!set.delete(value)) throw new KeyError(value);
}
