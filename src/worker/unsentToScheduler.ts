/**
 * What a worker sends the scheduler in place of a message it cannot send
 * (larger than the scheduler's `maxMessageBytes`, which it said at
 * registration, or the worker's own).
 *
 * A `task-erred` whose texts are that large (a `TaskError` keeps its texts
 * whole) becomes one whose error says so, with its name and the first 2,000
 * characters of its text (`errorStart`): the task errs, and the
 * worker goes on. Before, the worker closed on it, and the task, run again
 * elsewhere, closed the next worker the same way. An `add-keys` or a
 * `request-refresh-who-has` of many keys goes in halves (`keysInHalves`),
 * halved again while too large. Any other message is one the scheduler waits
 * for (a task's end, a fetch's): nothing stands in for it, and the worker
 * closes, saying why.
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { errorStart } from "../protocol/errorStart.ts";
import { keysInHalves } from "../protocol/keysInHalves.ts";
import type {
  AddKeysMsg,
  RequestRefreshWhoHasMsg,
  TaskErredMsg,
} from "../protocol/messagesWorker.ts";

/** The stand-ins sent, so that one that cannot be sent either is not replaced again. */
const standIns = new WeakSet<object>();

/**
 * What to send in place of `msg`, which could not be sent (`err`): a shorter
 * `task-erred`, or the halves of a message of many keys; empty for nothing.
 */
export function inPlaceOfUnsent(msg: unknown, err: unknown): object[] {
  if (!(err instanceof MessageTooLargeError)) return [];
  if (typeof msg !== "object" || msg === null || standIns.has(msg)) return [];
  const op = (msg as { op?: unknown }).op;
  if (op === "add-keys" || op === "request-refresh-who-has") {
    return keysInHalves(msg as AddKeysMsg | RequestRefreshWhoHasMsg);
  }
  if (op !== "task-erred") return [];
  const m = msg as TaskErredMsg;
  const { name, start } = errorStart(m.exception, m.exceptionText);
  const message = `the worker cannot send the error of task ${m.key} to the scheduler (${err.message}); it starts: ${start}`;
  const standIn: TaskErredMsg = {
    ...m,
    exception: { name, message },
    traceback: null,
    exceptionText: `${name}: ${message}`,
    tracebackText: "",
  };
  standIns.add(standIn);
  return [standIn];
}
