import { showValue } from "../../util/showValue.ts";
import {
  AddKeysMsg,
  Execute,
  GatherDep,
  type Instruction,
  LongRunningMsg,
  ReleaseWorkerDataMsg,
  RequestRefreshWhoHasMsg,
  RescheduleMsg,
  RetryBusyWorkerLater,
  StealResponseMsg,
  TaskErredMsg,
  TaskFinishedMsg,
} from "../../worker/state/instructions.ts";
import { TASK_STATES, type TaskStateState } from "../../worker/state/taskState.ts";
import { DaskDictError, type Dict, FieldReader, isDict } from "./fields.ts";

/** Python's `sorted()` of strings: by code point. */
export function sortedStrings(xs: Iterable<string>): string[] {
  return [...xs].sort(compareCodePoints);
}

export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order differs from code point order only above the BMP.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(i) as number;
    if (ca !== cb) return ca < cb ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/**
 * The recorded dict of an instruction (conformance vectors): `cls`, `stimulus_id`,
 * `op` for scheduler messages, and the fields FORMAT.md keeps, sets as sorted lists.
 */
export function instructionToDict(inst: Instruction): Dict {
  const base: Dict = { cls: inst.cls, stimulus_id: inst.stimulusId };
  switch (inst.cls) {
    case "GatherDep":
      return {
        ...base,
        worker: inst.worker,
        to_gather: sortedStrings(inst.toGather),
        total_nbytes: inst.totalNbytes,
      };
    case "Execute":
      return { ...base, key: inst.key };
    case "RetryBusyWorkerLater":
      return { ...base, worker: inst.worker };
    case "TaskFinishedMsg":
      return {
        ...base,
        op: inst.op,
        key: inst.key,
        run_id: inst.runId,
        nbytes: inst.nbytes,
        typename: inst.typename,
      };
    case "TaskErredMsg":
      return {
        ...base,
        op: inst.op,
        key: inst.key,
        run_id: inst.runId,
        exception_text: inst.exceptionText,
        traceback_text: inst.tracebackText,
      };
    case "ReleaseWorkerDataMsg":
    case "RescheduleMsg":
      return { ...base, op: inst.op, key: inst.key };
    case "LongRunningMsg":
      return { ...base, op: inst.op, key: inst.key, compute_duration: inst.computeDuration };
    case "AddKeysMsg":
    case "RequestRefreshWhoHasMsg":
      return { ...base, op: inst.op, keys: sortedStrings(inst.keys) };
    case "StealResponseMsg":
      return { ...base, op: inst.op, key: inst.key, state: inst.state };
  }
}

/** An instruction from its recorded dict (the inverse of {@link instructionToDict}). */
export function instructionFromDict(d: unknown): Instruction {
  if (!isDict(d))
    throw new DaskDictError(`instruction: expected an object, got ${showValue(d, 80)}`);
  const cls = d.cls;
  if (typeof cls !== "string") {
    throw new DaskDictError(`instruction: "cls" must be a string, got ${showValue(cls)}`);
  }
  const r = new FieldReader(d, cls);
  const sid = () => r.str("stimulus_id");
  switch (cls) {
    case "GatherDep":
      return new GatherDep(
        r.str("worker"),
        new Set(r.strList("to_gather")),
        r.num("total_nbytes"),
        sid(),
      );
    case "Execute":
      return new Execute(r.str("key"), sid());
    case "RetryBusyWorkerLater":
      return new RetryBusyWorkerLater(r.str("worker"), sid());
    case "TaskFinishedMsg":
      return new TaskFinishedMsg(
        r.str("key"),
        r.int("run_id"),
        r.numOrNull("nbytes"),
        r.strOrNull("typename"),
        r.str("typename"),
        {},
        null,
        [],
        sid(),
      );
    case "TaskErredMsg":
      return new TaskErredMsg(
        r.str("key"),
        r.int("run_id"),
        null,
        null,
        r.str("exception_text"),
        r.str("traceback_text"),
        null,
        [],
        sid(),
      );
    case "ReleaseWorkerDataMsg":
      return new ReleaseWorkerDataMsg(r.str("key"), sid());
    case "RescheduleMsg":
      return new RescheduleMsg(r.str("key"), sid());
    case "LongRunningMsg":
      return new LongRunningMsg(r.str("key"), r.numOrNull("compute_duration"), sid());
    case "AddKeysMsg":
      return new AddKeysMsg(r.strList("keys"), sid());
    case "RequestRefreshWhoHasMsg":
      return new RequestRefreshWhoHasMsg(r.strList("keys"), sid());
    case "StealResponseMsg":
      return new StealResponseMsg(r.str("key"), taskStateOrNull(r, "state"), sid());
    default:
      throw new DaskDictError(`instruction: unknown class ${JSON.stringify(cls)}`);
  }
}

/** A task state or null; anything else is refused, naming the field. */
function taskStateOrNull(r: FieldReader, field: string): TaskStateState | null {
  const v = r.strOrNull(field);
  if (v !== null && !(TASK_STATES as readonly string[]).includes(v)) {
    r.fail(field, `a task state (${TASK_STATES.join(", ")}) or null`, v);
  }
  return v as TaskStateState | null;
}
