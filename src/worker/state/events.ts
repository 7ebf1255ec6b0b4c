import type { Priority } from "../../util/priority.ts";
import { assert } from "../../util/pyErrors.ts";
import { type ErrorMessage, errorMessage, TaskError } from "./errorMessage.ts";
import {
  anyValue,
  checkBoolean,
  checkFieldsObject,
  checkInteger,
  checkKeyList,
  checkMapLike,
  checkNumber,
  checkNumberOrNull,
  checkPriority,
  checkRecord,
  checkString,
  checkStringOrNull,
  FIELDS_CHECKED,
  isHolderList,
  isNumber,
} from "./eventFields.ts";
import { SerializedTask } from "./taskState.ts";

/**
 * Stimuli that can change the worker state: messages from the scheduler, and the
 * completions of the instructions the state machine gave the shell.
 */
export type StateMachineEvent =
  | PauseEvent
  | UnpauseEvent
  | RetryBusyWorkerEvent
  | GatherDepSuccessEvent
  | GatherDepBusyEvent
  | GatherDepNetworkFailureEvent
  | GatherDepFailureEvent
  | RemoveWorkerEvent
  | ComputeTaskEvent
  | ExecuteSuccessEvent
  | ExecuteFailureEvent
  | RescheduleEvent
  | CancelComputeEvent
  | FindMissingEvent
  | RefreshWhoHasEvent
  | AcquireReplicasEvent
  | RemoveReplicasEvent
  | FreeKeysEvent
  | StealRequestEvent
  | UpdateDataEvent
  | SecedeEvent;

/** Class names of all events. */
export type EventClass = StateMachineEvent["cls"];

/** Completions of a GatherDep instruction. */
export type GatherDepDoneEvent =
  | GatherDepSuccessEvent
  | GatherDepBusyEvent
  | GatherDepNetworkFailureEvent
  | GatherDepFailureEvent;

/** Completions of an Execute instruction. */
export type ExecuteDoneEvent = ExecuteSuccessEvent | ExecuteFailureEvent | RescheduleEvent;

/** `{key: [worker address, ...]}` */
export type WhoHas = ReadonlyMap<string, readonly string[]>;

/** A map given as a Map or as a plain object. */
export type MapLike<V> = ReadonlyMap<string, V> | Readonly<Record<string, V>>;

/**
 * Accepts a Map or a plain object, for hand-written events. A Map is taken as it is
 * (events are immutable: nothing writes to their maps).
 */
export function toMap<V>(m: MapLike<V> | null | undefined): ReadonlyMap<string, V> {
  if (m === null || m === undefined) return EMPTY_MAP as ReadonlyMap<string, V>;
  if (m instanceof Map) return m;
  const entries = Object.entries(m as Record<string, V>);
  // Most maps of a compute-task are empty: share one instead of allocating.
  return entries.length === 0 ? (EMPTY_MAP as ReadonlyMap<string, V>) : new Map(entries);
}

const EMPTY_MAP: ReadonlyMap<string, never> = new Map<string, never>();

/** The keys of `data` with their values dropped, for the stimulus log. */
function withoutValues(data: ReadonlyMap<string, unknown>): ReadonlyMap<string, null> {
  const out = new Map<string, null>();
  for (const k of data.keys()) out.set(k, null);
  return out;
}

/** The run spec of a logged ComputeTaskEvent: stripped, as the seed's `_clean`. */
const LOGGED_RUN_SPEC = new SerializedTask();

/** Fields shared by every event. */
export abstract class EventBase {
  // Assigned, not defined as class fields: a field definition here runs for every
  // kind of event, and V8 handles such a define site, once it has seen many hidden
  // classes, in its runtime (5% of a replay went there, in copying events for the log).
  /** Unique ID of the event; every transition it causes is logged with it. */
  declare readonly stimulusId: string;
  /** When the worker handled it (set on logging). */
  declare handled: number | null;

  constructor(f: { stimulusId: string }) {
    // The class name (`new.target.name`) is looked up only when a check fails.
    if (typeof f !== "object" || f === null) checkFieldsObject(new.target.name, f);
    if (typeof f.stimulusId !== "string") checkString(new.target.name, "stimulusId", f.stimulusId);
    this.stimulusId = f.stimulusId;
    this.handled = null;
  }

  /** A copy small enough to keep in the stimulus log (values and run specs dropped). */
  toLoggable(handled: number): this {
    this.handled = handled;
    return this;
  }
}

/** Stop starting tasks and transfers; running ones go on. */
export class PauseEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "PauseEvent" as const;
  constructor(f: { stimulusId: string }) {
    super(f);
  }
}

/** Resume after a PauseEvent. */
export class UnpauseEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "UnpauseEvent" as const;
  constructor(f: { stimulusId: string }) {
    super(f);
  }
}

/** A busy peer may be asked again. */
export class RetryBusyWorkerEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "RetryBusyWorkerEvent" as const;
  /** The busy peer, which may now be asked again. */
  readonly worker: string;
  constructor(f: { worker: string; stimulusId: string }) {
    super(f);
    checkString(this.cls, "worker", f.worker);
    this.worker = f.worker;
  }
}

/** Fields shared by the completions of a GatherDep instruction (the seed's GatherDepDoneEvent). */
export abstract class GatherDepDoneBase extends EventBase {
  /** The peer that was asked. */
  readonly worker: string;
  /** Must be the same as in the GatherDep instruction. */
  readonly totalNbytes: number;
  constructor(f: { worker: string; totalNbytes: number; stimulusId: string }) {
    super(f);
    checkString(new.target.name, "worker", f.worker);
    checkNumber(new.target.name, "totalNbytes", f.totalNbytes);
    this.worker = f.worker;
    this.totalNbytes = f.totalNbytes;
  }
}

/** GatherDep finished: the peer sent (some of) the keys. */
export class GatherDepSuccessEvent extends GatherDepDoneBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "GatherDepSuccessEvent" as const;
  /** There may be fewer keys than in GatherDep. */
  readonly data: ReadonlyMap<string, unknown>;
  constructor(
    f: {
      worker: string;
      totalNbytes: number;
      data: MapLike<unknown>;
      stimulusId: string;
    },
    checked?: typeof FIELDS_CHECKED,
  ) {
    super(f);
    if (checked !== FIELDS_CHECKED) checkMapLike(this.cls, "data", f.data, anyValue, "a value");
    this.data = toMap(f.data);
  }
  override toLoggable(handled: number): this {
    const out = new GatherDepSuccessEvent(
      {
        worker: this.worker,
        totalNbytes: this.totalNbytes,
        data: withoutValues(this.data),
        stimulusId: this.stimulusId,
      },
      FIELDS_CHECKED,
    );
    out.handled = handled;
    return out as this;
  }
}

/** GatherDep finished: the peer was busy. */
export class GatherDepBusyEvent extends GatherDepDoneBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "GatherDepBusyEvent" as const;
}

/** GatherDep finished: the network failed while talking to the peer. */
export class GatherDepNetworkFailureEvent extends GatherDepDoneBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "GatherDepNetworkFailureEvent" as const;
}

/** GatherDep finished with another error (e.g. data failed to deserialize). */
export class GatherDepFailureEvent extends GatherDepDoneBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "GatherDepFailureEvent" as const;
  /** The error (the seed's serialised exception); opaque to the state machine. */
  readonly exception: unknown;
  /** Its traceback, or null. */
  readonly traceback: unknown;
  /** The error as text (the seed's `exception_text`). */
  readonly exceptionText: string;
  /** The traceback as text (the seed's `traceback_text`); may be empty. */
  readonly tracebackText: string;
  constructor(f: {
    worker: string;
    totalNbytes: number;
    exception: unknown;
    traceback: unknown;
    exceptionText: string;
    tracebackText: string;
    stimulusId: string;
  }) {
    super(f);
    checkString(this.cls, "exceptionText", f.exceptionText);
    checkString(this.cls, "tracebackText", f.tracebackText);
    this.exception = f.exception;
    this.traceback = f.traceback;
    this.exceptionText = f.exceptionText;
    this.tracebackText = f.tracebackText;
  }

  /** The event for error `err`, its texts made by `convert` (the seed's `from_exception`). */
  static fromException(
    err: unknown,
    f: { worker: string; totalNbytes: number; stimulusId: string },
    convert: (err: unknown) => ErrorMessage = errorMessage,
  ): GatherDepFailureEvent {
    const msg = convert(err);
    return new GatherDepFailureEvent({ ...f, ...msg });
  }
}

/** The scheduler says a peer is gone. */
export class RemoveWorkerEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "RemoveWorkerEvent" as const;
  /** The address of the peer that left; tasks stop expecting it to hold data. */
  readonly worker: string;
  constructor(f: { worker: string; stimulusId: string }) {
    super(f);
    checkString(this.cls, "worker", f.worker);
    this.worker = f.worker;
  }
}

/** Fields of a ComputeTaskEvent. */
export interface ComputeTaskFields {
  /** The task's key. */
  key: string;
  /**
   * The ID of this run, given by the scheduler; a completion that carries an older one is stale.
   */
  runId: number;
  /** For each dependency, the workers that hold it (`{key: [address, ...]}`). */
  whoHas: MapLike<readonly string[]>;
  /** For each dependency, its size in bytes. */
  nbytes: MapLike<number>;
  /** The scheduler's priority (a Python tuple in the seed): the lowest runs first. */
  priority: Priority;
  /** The expected run time, in seconds (the scheduler's estimate for the task prefix). */
  duration: number;
  /** The task to run (anything but a SerializedTask is wrapped as its `task`). */
  runSpec: unknown;
  /**
   * The seed's legacy form: with `args` and `kwargs`, the function to run; given instead of
   * `runSpec`.
   */
  function?: unknown;
  /** The positional arguments of `function`, or absent. */
  args?: unknown;
  /** The keyword arguments of `function`, or absent. */
  kwargs?: unknown;
  /**
   * Abstract resources the task needs while it runs (`{name: amount}`); empty when unrestricted.
   */
  resourceRestrictions: MapLike<number>;
  /** The task makes an actor: its result is an object that stays on this worker. */
  actor: boolean;
  /** The task's annotations, as the client gave them. */
  annotations: Record<string, unknown>;
  /** The span the task belongs to (the seed's `span_id`, see `distributed.spans`), or null. */
  spanId: string | null;
  /** The unique ID of this event (the seed's `stimulus_id`). */
  stimulusId: string;
}

/** The scheduler asks this worker to compute a task (`compute-task`). */
export class ComputeTaskEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "ComputeTaskEvent" as const;
  /** The task's key. */
  readonly key: string;
  /**
   * The ID of this run, given by the scheduler; a completion that carries an older one is stale.
   */
  readonly runId: number;
  /** For each dependency, the workers that hold it (`{key: [address, ...]}`). */
  readonly whoHas: WhoHas;
  /** For each dependency, its size in bytes. */
  readonly nbytes: ReadonlyMap<string, number>;
  /** The scheduler's priority (a Python tuple in the seed): the lowest runs first. */
  readonly priority: Priority;
  /** The expected run time, in seconds (the scheduler's estimate for the task prefix). */
  readonly duration: number;
  /**
   * What to run: the given run spec, or one made of `function`, `args` and `kwargs`. A logged copy
   * has an empty one.
   */
  runSpec: SerializedTask;
  /** The seed's legacy function field, or null; when set, `runSpec` was made of it. */
  function: unknown;
  /** The positional arguments of `function`, or null. */
  args: unknown;
  /** The keyword arguments of `function`, or null. */
  kwargs: unknown;
  /**
   * Abstract resources the task needs while it runs (`{name: amount}`); empty when unrestricted.
   */
  readonly resourceRestrictions: ReadonlyMap<string, number>;
  /** The task makes an actor: its result is an object that stays on this worker. */
  readonly actor: boolean;
  /** The task's annotations, as the client gave them. */
  readonly annotations: Record<string, unknown>;
  /** The span the task belongs to (the seed's `span_id`, see `distributed.spans`), or null. */
  readonly spanId: string | null;

  constructor(f: ComputeTaskFields, checked?: typeof FIELDS_CHECKED) {
    super(f);
    if (checked !== FIELDS_CHECKED) checkComputeTaskFields(f);
    this.key = f.key;
    this.runId = f.runId;
    this.whoHas = toMap(f.whoHas);
    this.nbytes = toMap(f.nbytes);
    this.priority = f.priority;
    this.duration = f.duration;
    const fn = f.function ?? null;
    this.function = fn;
    this.args = f.args ?? null;
    this.kwargs = f.kwargs ?? null;
    // As the seed: a (function, args, kwargs) triple or a task becomes the run spec.
    if (fn !== null) {
      // The seed's __post_init__ asserts it: the function replaces the run spec, so both is a mistake.
      assert(f.runSpec == null, "ComputeTaskEvent: a function and a run spec were both given");
      this.runSpec = new SerializedTask(null, fn, f.args ?? null, f.kwargs ?? null);
    } else if (f.runSpec instanceof SerializedTask) {
      this.runSpec = f.runSpec;
    } else {
      this.runSpec = new SerializedTask(f.runSpec);
    }
    this.resourceRestrictions = toMap(f.resourceRestrictions);
    this.actor = f.actor;
    this.annotations = f.annotations;
    this.spanId = f.spanId;
  }

  override toLoggable(handled: number): this {
    const out = new ComputeTaskEvent(
      {
        key: this.key,
        runId: this.runId,
        whoHas: this.whoHas,
        nbytes: this.nbytes,
        priority: this.priority,
        duration: this.duration,
        runSpec: LOGGED_RUN_SPEC,
        resourceRestrictions: this.resourceRestrictions,
        actor: this.actor,
        annotations: this.annotations,
        spanId: this.spanId,
        stimulusId: this.stimulusId,
      },
      FIELDS_CHECKED,
    );
    out.handled = handled;
    return out as this;
  }

  /** An event with reasonable defaults, for tests. */
  static dummy(
    key: string,
    o: {
      runId?: number;
      whoHas?: MapLike<readonly string[]>;
      nbytes?: MapLike<number>;
      priority?: Priority;
      duration?: number;
      resourceRestrictions?: MapLike<number>;
      actor?: boolean;
      annotations?: Record<string, unknown>;
      stimulusId: string;
    },
  ): ComputeTaskEvent {
    const whoHas = toMap(o.whoHas);
    // The seed's `nbytes or {k: 1 for k in who_has}`: an empty map takes the default too.
    const given = toMap(o.nbytes);
    const nbytes = given.size > 0 ? given : new Map([...whoHas.keys()].map((k) => [k, 1]));
    return new ComputeTaskEvent({
      key,
      runId: o.runId ?? 0,
      whoHas,
      nbytes,
      priority: o.priority ?? [0],
      duration: o.duration ?? 1.0,
      runSpec: null,
      resourceRestrictions: o.resourceRestrictions ?? {},
      actor: o.actor ?? false,
      annotations: o.annotations ?? {},
      spanId: null,
      stimulusId: o.stimulusId,
    });
  }
}

/** Execute finished: the task returned a value. */
export class ExecuteSuccessEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "ExecuteSuccessEvent" as const;
  /** The task that ran. */
  readonly key: string;
  /** The run ID of the ComputeTaskEvent this run answers. */
  readonly runId: number;
  /** The task's result; null in a logged copy. */
  value: unknown;
  /** When the run started, in wall-clock seconds since the epoch. */
  readonly start: number;
  /** When the run ended, in wall-clock seconds since the epoch. */
  readonly stop: number;
  /** The result's estimated size in bytes. */
  readonly nbytes: number;
  /** The value's type name. */
  readonly type: string | null;
  constructor(
    f: {
      key: string;
      runId: number;
      value: unknown;
      start: number;
      stop: number;
      nbytes: number;
      type: string | null;
      stimulusId: string;
    },
    checked?: typeof FIELDS_CHECKED,
  ) {
    super(f);
    if (checked !== FIELDS_CHECKED) {
      checkString(this.cls, "key", f.key);
      checkInteger(this.cls, "runId", f.runId);
      checkNumber(this.cls, "start", f.start);
      checkNumber(this.cls, "stop", f.stop);
      checkNumber(this.cls, "nbytes", f.nbytes);
      checkStringOrNull(this.cls, "type", f.type);
    }
    this.key = f.key;
    this.runId = f.runId;
    this.value = f.value;
    this.start = f.start;
    this.stop = f.stop;
    this.nbytes = f.nbytes;
    this.type = f.type;
  }

  override toLoggable(handled: number): this {
    const out = new ExecuteSuccessEvent(
      {
        key: this.key,
        runId: this.runId,
        value: null,
        start: this.start,
        stop: this.stop,
        nbytes: this.nbytes,
        type: this.type,
        stimulusId: this.stimulusId,
      },
      FIELDS_CHECKED,
    );
    out.handled = handled;
    return out as this;
  }

  /** An event with reasonable defaults, for tests. */
  static dummy(
    key: string,
    o: { value?: unknown; runId?: number; nbytes?: number; stimulusId: string },
  ): ExecuteSuccessEvent {
    return new ExecuteSuccessEvent({
      key,
      runId: o.runId ?? 1,
      value: o.value ?? null,
      start: 0.0,
      stop: 1.0,
      nbytes: o.nbytes ?? 1,
      type: null,
      stimulusId: o.stimulusId,
    });
  }
}

/** Execute finished: the task threw. */
export class ExecuteFailureEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "ExecuteFailureEvent" as const;
  /** The task that ran. */
  readonly key: string;
  /** The run ID of the ComputeTaskEvent this run answers. */
  readonly runId: number;
  /** When the run started, in wall-clock seconds since the epoch; null if it never started. */
  readonly start: number | null;
  /** When the run ended, in wall-clock seconds since the epoch; null if it never started. */
  readonly stop: number | null;
  /** The error (the seed's serialised exception); opaque to the state machine. */
  readonly exception: unknown;
  /** Its traceback, or null. */
  readonly traceback: unknown;
  /** The error as text (the seed's `exception_text`). */
  readonly exceptionText: string;
  /** The traceback as text (the seed's `traceback_text`); may be empty. */
  readonly tracebackText: string;
  constructor(f: {
    key: string;
    runId: number;
    start: number | null;
    stop: number | null;
    exception: unknown;
    traceback: unknown;
    exceptionText: string;
    tracebackText: string;
    stimulusId: string;
  }) {
    super(f);
    checkString(this.cls, "key", f.key);
    checkInteger(this.cls, "runId", f.runId);
    checkNumberOrNull(this.cls, "start", f.start);
    checkNumberOrNull(this.cls, "stop", f.stop);
    checkString(this.cls, "exceptionText", f.exceptionText);
    checkString(this.cls, "tracebackText", f.tracebackText);
    this.key = f.key;
    this.runId = f.runId;
    this.start = f.start;
    this.stop = f.stop;
    this.exception = f.exception;
    this.traceback = f.traceback;
    this.exceptionText = f.exceptionText;
    this.tracebackText = f.tracebackText;
  }

  /** The event for error `err`, its texts made by `convert` (the seed's `from_exception`). */
  static fromException(
    err: unknown,
    f: {
      key: string;
      runId: number;
      start?: number | null;
      stop?: number | null;
      stimulusId: string;
    },
    convert: (err: unknown) => ErrorMessage = errorMessage,
  ): ExecuteFailureEvent {
    const msg = convert(err);
    return new ExecuteFailureEvent({
      key: f.key,
      runId: f.runId,
      start: f.start ?? null,
      stop: f.stop ?? null,
      exception: msg.exception,
      traceback: msg.traceback,
      exceptionText: msg.exceptionText,
      tracebackText: msg.tracebackText,
      stimulusId: f.stimulusId,
    });
  }

  /** An event with reasonable defaults, for tests. */
  static dummy(key: string, o: { runId?: number; stimulusId: string }): ExecuteFailureEvent {
    return new ExecuteFailureEvent({
      key,
      runId: o.runId ?? 1,
      start: null,
      stop: null,
      // As the seed's `Serialize(None)`: a truthy placeholder, which the
      // transitions to error assert (`assert ts.exception`).
      exception: new TaskError("", ""),
      traceback: null,
      exceptionText: "",
      tracebackText: "",
      stimulusId: o.stimulusId,
    });
  }
}

/** Execute finished: the task asked to be rescheduled elsewhere. */
export class RescheduleEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "RescheduleEvent" as const;
  /** The task that asked to be rescheduled. */
  readonly key: string;
  constructor(f: { key: string; stimulusId: string }) {
    super(f);
    checkString(this.cls, "key", f.key);
    this.key = f.key;
  }
  /** For symmetry with the other ExecuteDoneEvents. */
  static dummy(key: string, o: { stimulusId: string }): RescheduleEvent {
    return new RescheduleEvent({ key, stimulusId: o.stimulusId });
  }
}

/** Cancel a task that has not started yet (best effort). */
export class CancelComputeEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "CancelComputeEvent" as const;
  /** The task to cancel. */
  readonly key: string;
  constructor(f: { key: string; stimulusId: string }) {
    super(f);
    checkString(this.cls, "key", f.key);
    this.key = f.key;
  }
}

/** Periodic: ask the scheduler about keys no peer is known to hold. */
export class FindMissingEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "FindMissingEvent" as const;
  constructor(f: { stimulusId: string }) {
    super(f);
  }
}

/** Updated who_has from the scheduler (`refresh-who-has`). */
export class RefreshWhoHasEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "RefreshWhoHasEvent" as const;
  /**
   * The current holders of each key asked about (`{key: [address, ...]}`); an empty list means
   * none.
   */
  readonly whoHas: WhoHas;
  constructor(f: { whoHas: MapLike<readonly string[]>; stimulusId: string }) {
    super(f);
    checkWhoHas(this.cls, f.whoHas);
    this.whoHas = toMap(f.whoHas);
  }
}

/** Fetch replicas of these keys (`acquire-replicas`). */
export class AcquireReplicasEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "AcquireReplicasEvent" as const;
  /** For each key to fetch, the workers that hold it (`{key: [address, ...]}`). */
  readonly whoHas: WhoHas;
  /** For each key to fetch, its size in bytes. */
  readonly nbytes: ReadonlyMap<string, number>;
  constructor(f: {
    whoHas: MapLike<readonly string[]>;
    nbytes: MapLike<number>;
    stimulusId: string;
  }) {
    super(f);
    checkWhoHas(this.cls, f.whoHas);
    checkMapLike(this.cls, "nbytes", f.nbytes, isNumber, "a number");
    this.whoHas = toMap(f.whoHas);
    this.nbytes = toMap(f.nbytes);
  }
}

/** Drop these replicas if they are in memory (`remove-replicas`). */
export class RemoveReplicasEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "RemoveReplicasEvent" as const;
  /** The keys whose replicas to drop. */
  readonly keys: readonly string[];
  constructor(f: { keys: readonly string[]; stimulusId: string }) {
    super(f);
    checkKeyList(this.cls, "keys", f.keys);
    this.keys = f.keys;
  }
}

/** The scheduler no longer needs these keys here (`free-keys`). */
export class FreeKeysEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "FreeKeysEvent" as const;
  /** The keys to release. */
  readonly keys: readonly string[];
  constructor(f: { keys: readonly string[]; stimulusId: string }) {
    super(f);
    checkKeyList(this.cls, "keys", f.keys);
    this.keys = f.keys;
  }
}

/** The scheduler wants to move a task elsewhere (`steal-request`). */
export class StealRequestEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "StealRequestEvent" as const;
  /** The task the scheduler wants back. */
  readonly key: string;
  constructor(f: { key: string; stimulusId: string }) {
    super(f);
    checkString(this.cls, "key", f.key);
    this.key = f.key;
  }
}

/** Values put straight into this worker (scatter). */
export class UpdateDataEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "UpdateDataEvent" as const;
  /** The values, by key; values are dropped (null) in a logged copy. */
  readonly data: ReadonlyMap<string, unknown>;
  constructor(f: { data: MapLike<unknown>; stimulusId: string }, checked?: typeof FIELDS_CHECKED) {
    super(f);
    if (checked !== FIELDS_CHECKED) checkMapLike(this.cls, "data", f.data, anyValue, "a value");
    this.data = toMap(f.data);
  }
  override toLoggable(handled: number): this {
    const out = new UpdateDataEvent(
      {
        data: withoutValues(this.data),
        stimulusId: this.stimulusId,
      },
      FIELDS_CHECKED,
    );
    out.handled = handled;
    return out as this;
  }
}

/** A running task left its thread (`secede()`). */
export class SecedeEvent extends EventBase {
  /** The seed's class name; it tags the `StateMachineEvent` union. */
  readonly cls = "SecedeEvent" as const;
  /** The task that seceded. */
  readonly key: string;
  /** How long it had run on its thread before seceding, in seconds. */
  readonly computeDuration: number;
  constructor(f: { key: string; computeDuration: number; stimulusId: string }) {
    super(f);
    checkString(this.cls, "key", f.key);
    checkNumber(this.cls, "computeDuration", f.computeDuration);
    this.key = f.key;
    this.computeDuration = f.computeDuration;
  }
}

function checkWhoHas(cls: string, whoHas: unknown): void {
  checkMapLike(cls, "whoHas", whoHas, isHolderList, "a list of worker addresses");
}

/** The checks of a ComputeTaskEvent's fields. */
function checkComputeTaskFields(f: ComputeTaskFields): void {
  const cls = "ComputeTaskEvent";
  checkString(cls, "key", f.key);
  checkInteger(cls, "runId", f.runId);
  checkWhoHas(cls, f.whoHas);
  checkMapLike(cls, "nbytes", f.nbytes, isNumber, "a number");
  checkPriority(cls, "priority", f.priority);
  checkNumber(cls, "duration", f.duration);
  checkMapLike(cls, "resourceRestrictions", f.resourceRestrictions, isNumber, "a number");
  checkBoolean(cls, "actor", f.actor);
  checkRecord(cls, "annotations", f.annotations);
  checkStringOrNull(cls, "spanId", f.spanId);
}

/** The key an event is about, if it is about one (for `stimulusStory`). */
export function eventKey(ev: StateMachineEvent): string | null {
  return "key" in ev ? ev.key : null;
}
