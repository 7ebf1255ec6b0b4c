/**
 * What a worker sends the scheduler in place of a message it cannot send
 * (larger than the scheduler's `maxMessageBytes`, which it said at
 * registration, or the worker's own).
 *
 * A `task-erred` whose texts are that large (a `TaskError` keeps its texts
 * whole) becomes one whose error says so, with its name and the first 2,000
 * characters of its text (`errorStart`): the task errs, and the
 * worker goes on. Before, the worker closed on it, and the task, run again
 * elsewhere, closed the next worker the same way. Any other message is one the
 * scheduler waits for (a task's end, a fetch's): nothing stands in for it, and
 * the worker closes, saying why.
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { errorStart } from "../protocol/errorStart.ts";
import type { TaskErredMsg } from "../protocol/messagesWorker.ts";

/** The stand-ins sent, so that one that cannot be sent either is not replaced again. */
const standIns = new WeakSet<object>();

/** The message to send in place of `msg`, which could not be sent (`err`); null for none. */
export function inPlaceOfUnsent(msg: unknown, err: unknown): TaskErredMsg | null {
  if (!(err instanceof MessageTooLargeError)) return null;
  if (typeof msg !== "object" || msg === null || standIns.has(msg)) return null;
  if ((msg as { op?: unknown }).op !== "task-erred") return null;
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
  return standIn;
}
