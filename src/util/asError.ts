import { readableError } from "./readSafely.ts";

/**
 * `err` if it is an `Error`, else an `Error` whose message is `String(err)` (a
 * thrown string, say). Never throws: a value whose `instanceof` or `String()`
 * throws (a Proxy) is the plain error of what can be read of it
 * (`readableError`), as the error of a caller's code is reported with it.
 */
export function asError(err: unknown): Error {
  try {
    return err instanceof Error ? err : new Error(String(err));
  } catch {
    return readableError(err);
  }
}
