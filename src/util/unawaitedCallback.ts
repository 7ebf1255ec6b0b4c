/**
 * A caller's callback that synchronous code calls and cannot await (a replay's
 * or a simulation's `onProgress`, `runSeeds`' `onResult`): what it throws
 * propagates, as any throw, but a promise it returns (an `async` callback) is
 * awaited by nothing, and its rejection was unhandled, which ends a Node.js
 * process. It is said instead on the process's warning channel
 * (`WeftCallbackWarning`), as weft says the failures of other callbacks nothing
 * awaits: once, since such a callback is called many times, and the work goes on.
 */

import { warnCallbackFailed } from "./callbackWarning.ts";

/** `fn`, a rejection of the promise it returns said once as a warning naming `what`. */
export function unawaitedCallback<A extends unknown[]>(
  fn: (...args: A) => void,
  what: string,
): (...args: A) => void {
  let warned = false;
  const warnOnce = (err: unknown): void => {
    if (warned) return;
    warned = true;
    warnCallbackFailed(`${what} failed`, err);
  };
  return (...args) => {
    const returned: unknown = fn(...args);
    if (typeof (returned as PromiseLike<unknown> | null)?.then === "function") {
      (returned as PromiseLike<unknown>).then(undefined, warnOnce);
    }
  };
}
