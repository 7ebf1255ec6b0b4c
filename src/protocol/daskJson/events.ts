import { setOwnKey } from "../../util/ownKey.ts";
import { showValue } from "../../util/showValue.ts";
import { TaskError } from "../../worker/state/errorMessage.ts";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  type StateMachineEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "../../worker/state/events.ts";
import { DaskDictError, type Dict, FieldReader, isDict } from "./fields.ts";
import { encodeValue, RecordedValue } from "./values.ts";

/** How a recorded value (`{"typename", "sizeof", "value"|"repr"}`) becomes a JS value. */
export type ValueDecoder = (recorded: unknown) => unknown;

/** The default: an opaque {@link RecordedValue} that knows its type name and size. */
export const decodeRecordedValue: ValueDecoder = (v) => RecordedValue.fromDict(v);

type Decoder = (r: FieldReader, decodeValue: ValueDecoder) => StateMachineEvent;

function valueMap(r: FieldReader, field: string, decodeValue: ValueDecoder): Map<string, unknown> {
  const d = r.dict(field);
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(d)) out.set(k, decodeValue(v));
  return out;
}

/**
 * The dicts keep no exception object: the seed puts a placeholder there
 * (`Serialize(Exception())`), which is what makes `assert ts.exception` hold.
 */
function placeholderException(r: FieldReader): TaskError {
  return new TaskError(r.str("exception_text"), r.str("traceback_text"));
}

const DECODERS: Record<StateMachineEvent["cls"], Decoder> = {
  PauseEvent: (r) => new PauseEvent({ stimulusId: r.str("stimulus_id") }),
  UnpauseEvent: (r) => new UnpauseEvent({ stimulusId: r.str("stimulus_id") }),
  RetryBusyWorkerEvent: (r) =>
    new RetryBusyWorkerEvent({ worker: r.str("worker"), stimulusId: r.str("stimulus_id") }),
  GatherDepSuccessEvent: (r, dv) =>
    new GatherDepSuccessEvent({
      worker: r.str("worker"),
      totalNbytes: r.num("total_nbytes"),
      data: valueMap(r, "data", dv),
      stimulusId: r.str("stimulus_id"),
    }),
  GatherDepBusyEvent: (r) =>
    new GatherDepBusyEvent({
      worker: r.str("worker"),
      totalNbytes: r.num("total_nbytes"),
      stimulusId: r.str("stimulus_id"),
    }),
  GatherDepNetworkFailureEvent: (r) =>
    new GatherDepNetworkFailureEvent({
      worker: r.str("worker"),
      totalNbytes: r.num("total_nbytes"),
      stimulusId: r.str("stimulus_id"),
    }),
  GatherDepFailureEvent: (r) =>
    new GatherDepFailureEvent({
      worker: r.str("worker"),
      totalNbytes: r.num("total_nbytes"),
      exception: placeholderException(r),
      traceback: null,
      exceptionText: r.str("exception_text"),
      tracebackText: r.str("traceback_text"),
      stimulusId: r.str("stimulus_id"),
    }),
  RemoveWorkerEvent: (r) =>
    new RemoveWorkerEvent({ worker: r.str("worker"), stimulusId: r.str("stimulus_id") }),
  ComputeTaskEvent: (r) => {
    // run_spec alone may be absent: Dask's dumps leave it out of their stimulus logs.
    r.present(
      "duration",
      "function",
      "args",
      "kwargs",
      "resource_restrictions",
      "actor",
      "annotations",
      "span_id",
    );
    // The seed's __post_init__ asserts this; in a dict it is a malformed field, said as such.
    if (r.d.function != null && r.d.run_spec != null)
      r.fail("function", "null when run_spec is given (a task has one or the other)", r.d.function);
    return new ComputeTaskEvent({
      key: r.str("key"),
      runId: r.int("run_id"),
      whoHas: r.whoHas("who_has"),
      nbytes: r.numMap("nbytes"),
      priority: r.intList("priority"),
      duration: r.numOrNull("duration") ?? 0,
      runSpec: r.d.run_spec ?? null,
      function: r.d.function ?? null,
      args: r.d.args ?? null,
      kwargs: r.d.kwargs ?? null,
      resourceRestrictions: r.has("resource_restrictions")
        ? r.dictOrNull("resource_restrictions") === null
          ? new Map()
          : r.numMap("resource_restrictions")
        : new Map(),
      actor: r.has("actor") ? r.bool("actor") : false,
      annotations: r.dictOrNull("annotations") ?? {},
      spanId: r.strOrNull("span_id"),
      stimulusId: r.str("stimulus_id"),
    });
  },
  ExecuteSuccessEvent: (r, dv) => {
    r.present("value", "type");
    return new ExecuteSuccessEvent({
      key: r.str("key"),
      runId: r.int("run_id"),
      value: dv(r.d.value ?? null),
      start: r.num("start"),
      stop: r.num("stop"),
      nbytes: r.num("nbytes"),
      type: r.strOrNull("type"),
      stimulusId: r.str("stimulus_id"),
    });
  },
  ExecuteFailureEvent: (r) => {
    r.present("start", "stop");
    return new ExecuteFailureEvent({
      key: r.str("key"),
      runId: r.int("run_id"),
      start: r.numOrNull("start"),
      stop: r.numOrNull("stop"),
      exception: placeholderException(r),
      traceback: null,
      exceptionText: r.str("exception_text"),
      tracebackText: r.str("traceback_text"),
      stimulusId: r.str("stimulus_id"),
    });
  },
  RescheduleEvent: (r) =>
    new RescheduleEvent({ key: r.str("key"), stimulusId: r.str("stimulus_id") }),
  CancelComputeEvent: (r) =>
    new CancelComputeEvent({ key: r.str("key"), stimulusId: r.str("stimulus_id") }),
  FindMissingEvent: (r) => new FindMissingEvent({ stimulusId: r.str("stimulus_id") }),
  RefreshWhoHasEvent: (r) =>
    new RefreshWhoHasEvent({ whoHas: r.whoHas("who_has"), stimulusId: r.str("stimulus_id") }),
  AcquireReplicasEvent: (r) =>
    new AcquireReplicasEvent({
      whoHas: r.whoHas("who_has"),
      nbytes: r.numMap("nbytes"),
      stimulusId: r.str("stimulus_id"),
    }),
  RemoveReplicasEvent: (r) =>
    new RemoveReplicasEvent({ keys: r.strList("keys"), stimulusId: r.str("stimulus_id") }),
  FreeKeysEvent: (r) =>
    new FreeKeysEvent({ keys: r.strList("keys"), stimulusId: r.str("stimulus_id") }),
  StealRequestEvent: (r) =>
    new StealRequestEvent({ key: r.str("key"), stimulusId: r.str("stimulus_id") }),
  UpdateDataEvent: (r, dv) =>
    new UpdateDataEvent({ data: valueMap(r, "data", dv), stimulusId: r.str("stimulus_id") }),
  SecedeEvent: (r) =>
    new SecedeEvent({
      key: r.str("key"),
      computeDuration: r.num("compute_duration"),
      stimulusId: r.str("stimulus_id"),
    }),
};

/** Names of every event class the codec knows. */
export const EVENT_CLASSES = Object.keys(DECODERS) as StateMachineEvent["cls"][];

/**
 * An event from Dask's dict form (`StateMachineEvent._to_dict`: `"cls"`, `"stimulus_id"`
 * and the fields under their Python names). Throws {@link DaskDictError} naming the
 * class and field for an unknown class, a missing field or a field of the wrong type.
 * A field the class does not have is ignored, where Dask's `from_dict` raises: a
 * recording may carry more than it needs (Dask's own dicts add `handled`), and a
 * replay should not fail on what it does not read.
 */
export function eventFromDict(
  d: unknown,
  decodeValue: ValueDecoder = decodeRecordedValue,
): StateMachineEvent {
  if (!isDict(d)) throw new DaskDictError(`event: expected an object, got ${showValue(d, 80)}`);
  const cls = d.cls;
  if (typeof cls !== "string")
    throw new DaskDictError(`event: "cls" must be a string, got ${showValue(cls)}`);
  if (!Object.hasOwn(DECODERS, cls)) {
    throw new DaskDictError(
      `event: unknown class ${JSON.stringify(cls)} (known: ${EVENT_CLASSES.join(", ")})`,
    );
  }
  const ev = DECODERS[cls as StateMachineEvent["cls"]](new FieldReader(d, cls), decodeValue);
  if (typeof d.handled === "number") ev.handled = d.handled;
  return ev;
}

function keysOf(m: ReadonlyMap<string, unknown>): string[] {
  return [...m.keys()];
}

function mapToDict<V, W>(m: ReadonlyMap<string, V>, f: (v: V) => W): Dict {
  const out: Dict = {};
  for (const [k, v] of m) setOwnKey(out, k, f(v));
  return out;
}

const id = <T>(v: T): T => v;

/** Dask's dict form of an event (the inverse of {@link eventFromDict}). */
export function eventToDict(ev: StateMachineEvent): Dict {
  const base: Dict = { cls: ev.cls, stimulus_id: ev.stimulusId };
  switch (ev.cls) {
    case "PauseEvent":
    case "UnpauseEvent":
    case "FindMissingEvent":
      return base;
    case "RetryBusyWorkerEvent":
    case "RemoveWorkerEvent":
      return { ...base, worker: ev.worker };
    case "GatherDepSuccessEvent":
      return {
        ...base,
        worker: ev.worker,
        total_nbytes: ev.totalNbytes,
        data: mapToDict(ev.data, encodeValue),
      };
    case "GatherDepBusyEvent":
    case "GatherDepNetworkFailureEvent":
      return { ...base, worker: ev.worker, total_nbytes: ev.totalNbytes };
    case "GatherDepFailureEvent":
      return {
        ...base,
        worker: ev.worker,
        total_nbytes: ev.totalNbytes,
        exception: null,
        traceback: null,
        exception_text: ev.exceptionText,
        traceback_text: ev.tracebackText,
      };
    case "ComputeTaskEvent":
      return {
        ...base,
        key: ev.key,
        run_id: ev.runId,
        who_has: mapToDict(ev.whoHas, (v) => [...v]),
        nbytes: mapToDict(ev.nbytes, id),
        priority: [...ev.priority],
        duration: ev.duration,
        run_spec: null,
        function: null,
        args: null,
        kwargs: null,
        resource_restrictions: mapToDict(ev.resourceRestrictions, id),
        actor: ev.actor,
        annotations: ev.annotations,
        span_id: ev.spanId,
      };
    case "ExecuteSuccessEvent":
      return {
        ...base,
        key: ev.key,
        run_id: ev.runId,
        value: encodeValue(ev.value),
        start: ev.start,
        stop: ev.stop,
        nbytes: ev.nbytes,
        type: ev.type,
      };
    case "ExecuteFailureEvent":
      return {
        ...base,
        key: ev.key,
        run_id: ev.runId,
        start: ev.start,
        stop: ev.stop,
        exception: null,
        traceback: null,
        exception_text: ev.exceptionText,
        traceback_text: ev.tracebackText,
      };
    case "RescheduleEvent":
    case "CancelComputeEvent":
    case "StealRequestEvent":
      return { ...base, key: ev.key };
    case "RefreshWhoHasEvent":
      return { ...base, who_has: mapToDict(ev.whoHas, (v) => [...v]) };
    case "AcquireReplicasEvent":
      return {
        ...base,
        who_has: mapToDict(ev.whoHas, (v) => [...v]),
        nbytes: mapToDict(ev.nbytes, id),
      };
    case "RemoveReplicasEvent":
    case "FreeKeysEvent":
      return { ...base, keys: [...ev.keys] };
    case "UpdateDataEvent":
      return { ...base, data: mapToDict(ev.data, encodeValue) };
    case "SecedeEvent":
      return { ...base, key: ev.key, compute_duration: ev.computeDuration };
  }
}

export { keysOf };
