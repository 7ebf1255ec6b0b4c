/**
 * A worker's report of a task's run (`task-finished`, `task-erred`) that the
 * state machine refused as malformed (an `nbytes` of -1 or NaN, an
 * `exceptionText` that is not a string, a `runId` that is not a number): the
 * report is dropped, and the task would stay processing for good, its
 * clients waiting forever. When the report names a task processing on that
 * worker, of the current run (or of a run it does not say), the task errs
 * instead, as if the worker had reported an error naming what was wrong, so
 * `retries` apply and the clients hear of it. Dask's stream handler raises
 * on such a message, which closes the worker's stream and removes the worker
 * (its tasks run elsewhere, counted as suspicious): weft keeps the worker and
 * its other data, and fails the one task. A report it cannot attribute so is
 * only logged (at error) and counted.
 */

import type { TaskErredMsg } from "../protocol/messagesWorker.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import type { SchedulerEvent } from "./state/events.ts";
import type { SchedulerState } from "./state/schedulerState.ts";

/** The stimulus to handle in place of `ev`, refused with `err`; null for none. */
export function malformedReportStandIn(
  state: SchedulerState,
  ev: SchedulerEvent,
  err: Error,
): SchedulerEvent | null {
  if (ev.kind !== "worker-message" || typeof ev.msg !== "object" || ev.msg === null) return null;
  const { op, key, runId } = ev.msg as { op?: unknown; key?: unknown; runId?: unknown };
  if (op !== "task-finished" && op !== "task-erred") return null;
  if (typeof key !== "string" || key === "") return null;
  const ts = state.tasks.get(key);
  if (ts === undefined || ts.state !== "processing" || ts.processingOn?.address !== ev.worker) {
    return null;
  }
  // A well-formed run id of another run: a stale report, which would change nothing.
  if (Number.isInteger(runId) && runId !== ts.runId) return null;
  const text = `the scheduler refused the report of the task by the worker at ${ev.worker} as malformed: ${err.message}`;
  const msg: TaskErredMsg = {
    op: "task-erred",
    key,
    runId: ts.runId,
    exception: { name: err.name, message: text },
    traceback: null,
    exceptionText: text,
    tracebackText: "",
    stimulusId: newStimulusId("malformed-report"),
  };
  return { kind: "worker-message", worker: ev.worker, msg };
}
