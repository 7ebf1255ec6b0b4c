import { otherVersionNote } from "../protocol/clusterDump/versions.ts";
import type { DumpEvent, DumpObject, DumpTask, SchedulerDump } from "../protocol/clusterDump.ts";
import { isDumpObject, typeNameFromRepr } from "../protocol/clusterDump.ts";
import { eventFromDict } from "../protocol/daskJson/events.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";
import { ReplayInputError } from "./errors.ts";

/** The type name given to a value whose type the dump does not record. */
export const UNKNOWN_TYPENAME = "object";

/** A stand-in value in the recorded form the Dask-JSON codec turns into a RecordedValue. */
function standIn(typename: string, sizeof: number): DumpObject {
  return { typename, sizeof, value: null };
}

/**
 * The stand-in for a value the dump stripped from a transfer or a scatter: its type
 * name and size as the scheduler recorded them for the task (`TaskState.type`,
 * `nbytes`); for a task the scheduler had forgotten by the dump, as the worker
 * itself recorded them, if it still knew the task; else unknown
 * ({@link UNKNOWN_TYPENAME}, 0 bytes).
 */
function transferredValue(
  key: string,
  scheduler: SchedulerDump,
  workerTasks: ReadonlyMap<string, DumpTask> | undefined,
): DumpObject {
  const task = scheduler.tasks.get(key) ?? workerTasks?.get(key)?.raw;
  const type = typeof task?.type === "string" ? (typeNameFromRepr(task.type) ?? "") : "";
  const nbytes = task?.nbytes;
  return standIn(
    type !== "" ? type : UNKNOWN_TYPENAME,
    typeof nbytes === "number" && nbytes >= 0 ? nbytes : 0,
  );
}

/**
 * A dumped event (run specs and values stripped by Dask's `to_loggable`) as the dict
 * the Dask-JSON codec reads, with opaque stand-ins for the values:
 * - `ExecuteSuccessEvent`: `type` (`"<class 'int'>"`) becomes the type name Dask
 *   reports (`"int"`), and the value a stand-in of that type and of the event's `nbytes`;
 * - `GatherDepSuccessEvent`, `UpdateDataEvent`: each value a stand-in with the type
 *   and size the scheduler recorded for the task.
 */
export function dumpEventDict(
  ev: DumpEvent,
  scheduler: SchedulerDump,
  workerTasks?: ReadonlyMap<string, DumpTask>,
): DumpObject {
  switch (ev.cls) {
    case "ExecuteSuccessEvent": {
      const repr = ev.type;
      const typename =
        (typeof repr === "string" ? typeNameFromRepr(repr) : null) ?? UNKNOWN_TYPENAME;
      const nbytes = typeof ev.nbytes === "number" ? ev.nbytes : 0;
      return { ...ev, type: typename, value: standIn(typename, nbytes) };
    }
    case "GatherDepSuccessEvent":
    case "UpdateDataEvent": {
      if (!isDumpObject(ev.data)) return ev;
      const data: DumpObject = {};
      for (const key of Object.keys(ev.data)) {
        data[key] = transferredValue(key, scheduler, workerTasks);
      }
      return { ...ev, data };
    }
    default:
      return ev;
  }
}

/**
 * Decodes a worker's whole stimulus log up front, so that a malformed event is an
 * input error (naming the file and the event) before anything is replayed.
 */
export function decodeStimulusLog(
  file: string,
  address: string,
  events: readonly DumpEvent[],
  scheduler: SchedulerDump,
  workerTasks?: ReadonlyMap<string, DumpTask>,
  distributed: string | null = null,
): StateMachineEvent[] {
  const note = otherVersionNote(distributed);
  return events.map((ev, i) => {
    try {
      return eventFromDict(dumpEventDict(ev, scheduler, workerTasks));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new ReplayInputError(
        file,
        `workers[${JSON.stringify(address)}].stimulus_log[${i}]: ${message}${note === null ? "" : ` (${note})`}`,
        { cause: err },
      );
    }
  });
}
