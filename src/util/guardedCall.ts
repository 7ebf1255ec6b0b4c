/**
 * Calling a function a caller supplied (a callback, a hook) from a socket's
 * or a timer's event, where nothing awaits it: what it throws, or the
 * rejection of the promise it returns, would reach the process as an uncaught
 * exception or an unhandled rejection, and end it.
 */

import { readableError } from "./readSafely.ts";

/**
 * Run `call` (which calls the caller's function, with its `this`); what it
 * throws, and the rejection of a promise (any thenable) it returns, is handed
 * to `failed` instead.
 */
export function callGuarded(call: () => unknown, failed: (err: unknown) => void): void {
  let result: unknown;
  try {
    result = call();
  } catch (err) {
    tellFailure(failed, err);
    return;
  }
  // A `then` getter that throws, or a `then` that does, is the callback's failure too.
  try {
    const then = (result as PromiseLike<unknown> | undefined)?.then;
    if (typeof then === "function") {
      then.call(result, undefined, (err: unknown) => tellFailure(failed, err));
    }
  } catch (err) {
    tellFailure(failed, err);
  }
}

/**
 * `failed(err)`; if that throws (a logger reading the fields of a Proxy, of an
 * error whose getters throw), `failed` of the plain error of what can be read.
 */
export function tellFailure(failed: (err: unknown) => void, err: unknown): void {
  try {
    failed(err);
  } catch {
    failed(readableError(err));
  }
}
