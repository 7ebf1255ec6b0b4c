/**
 * Reporting a caller's callback that failed where there is no logger to tell
 * (a transport's option): on the process's warning channel. Apart from
 * `guardedCall.ts`, which the pure cores use and which touches no process.
 */

import { readableErrorFields } from "./readSafely.ts";

/**
 * Say on the process's warning channel (stderr, unless a `warning` listener
 * takes it) that the callback `what` failed with `err`: for a failure with
 * no logger to tell, which would otherwise go unsaid.
 */
export function warnCallbackFailed(what: string, err: unknown): void {
  const { name, message, stack } = readableErrorFields(err);
  process.emitWarning(`${what}: ${name}: ${message}`, {
    type: "WeftCallbackWarning",
    detail: stack,
  });
}
