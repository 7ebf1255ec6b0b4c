/**
 * Calling a function a caller supplied (a callback, a hook) from a socket's
 * or a timer's event, where nothing awaits it: what it throws, or the
 * rejection of the promise it returns, would reach the process as an uncaught
 * exception or an unhandled rejection, and end it.
 */

import { asError } from "./asError.ts";

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
    failed(err);
    return;
  }
  if (typeof (result as PromiseLike<unknown> | undefined)?.then === "function") {
    (result as PromiseLike<unknown>).then(undefined, failed);
  }
}

/**
 * Say on the process's warning channel (stderr, unless a `warning` listener
 * takes it) that the callback `what` failed with `err`: for a failure with
 * no logger to tell, which would otherwise go unsaid.
 */
export function warnCallbackFailed(what: string, err: unknown): void {
  const e = asError(err);
  process.emitWarning(`${what}: ${e.name}: ${e.message}`, {
    type: "WeftCallbackWarning",
    detail: e.stack,
  });
}
