import type { StartStop, TaskStateState } from "./taskState.ts";

/**
 * Commands from the worker state machine to the worker shell, in response to an event.
 * Instructions that start with a capital class name and end in `Msg` are messages to
 * the scheduler; the others (`GatherDep`, `Execute`, `RetryBusyWorkerLater`) are
 * asynchronous work whose completion comes back as an event.
 */
export type Instruction = GatherDep | Execute | RetryBusyWorkerLater | SendMessageToScheduler;

/** Instructions that are messages to the scheduler. */
export type SendMessageToScheduler =
  | TaskFinishedMsg
  | TaskErredMsg
  | ReleaseWorkerDataMsg
  | RescheduleMsg
  | LongRunningMsg
  | AddKeysMsg
  | RequestRefreshWhoHasMsg
  | StealResponseMsg;

/** Class names of all instructions. */
export type InstructionClass = Instruction["cls"];

/** A partial match of an instruction, for tests: `Execute.match({ key: "x" })`. */
export class InstructionMatch<T extends Instruction = Instruction> {
  /** Lets vitest/jest `toEqual` use this object as an asymmetric matcher. */
  readonly $$typeof = Symbol.for("jest.asymmetricMatcher");
  constructor(
    /** The class name the matched instruction must have. */
    readonly cls: T["cls"],
    /** The fields the matched instruction must have equal (others are not compared). */
    readonly fields: Partial<Omit<T, "cls">>,
  ) {}

  /** True when `other` is an instruction of this class whose listed fields are equal. */
  matches(other: unknown): boolean {
    if (typeof other !== "object" || other === null) return false;
    if ((other as { cls?: unknown }).cls !== this.cls) return false;
    for (const [k, v] of Object.entries(this.fields)) {
      if (!deepEqual((other as Record<string, unknown>)[k], v)) return false;
    }
    return true;
  }

  /** The asymmetric-matcher hook vitest/jest call: same as {@link matches}. */
  asymmetricMatch(other: unknown): boolean {
    return this.matches(other);
  }

  /** As the seed's repr: `Execute(key="x") (partial match)`, a set as `{"x"}`. */
  toString(): string {
    return `${this.cls}(${Object.entries(this.fields)
      .map(([k, v]) => `${k}=${shownField(v)}`)
      .join(", ")}) (partial match)`;
  }

  /** How vitest/jest print this matcher in a failed assertion's diff. */
  toAsymmetricMatcher(): string {
    return this.toString();
  }
}

/** A field of a partial match in its repr: JSON, but a Set as `{"x"}` and a Map as `{"k": 1}` (JSON gave `{}`). */
function shownField(v: unknown): string {
  if (v instanceof Set) return `{${[...v].map(shownField).join(", ")}}`;
  if (v instanceof Map) {
    return `{${[...v].map(([k, x]) => `${shownField(k)}: ${shownField(x)}`).join(", ")}}`;
  }
  return JSON.stringify(v) ?? String(v);
}

/**
 * Structural equality for plain data, Sets (as sets; an array is taken as the set
 * of its elements, for matches written `toGather: ["x"]`) and Maps. A Set or Map
 * is never equal to anything else (it threw for an object that is no iterable,
 * and a Map equalled `{}`), nor a Date to a Date of another time.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Set || b instanceof Set) {
    const asSet = (x: object): Set<unknown> | null =>
      x instanceof Set ? x : Array.isArray(x) ? new Set(x) : null;
    const sa = asSet(a);
    const sb = asSet(b);
    if (sa === null || sb === null || sa.size !== sb.size) return false;
    for (const x of sa) if (!sb.has(x)) return false;
    return true;
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k))) return false;
    return true;
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) {
      return false;
    }
  }
  return true;
}

function matcher<T extends Instruction>(cls: T["cls"]) {
  return (fields: Partial<Omit<T, "cls">> = {}) => new InstructionMatch<T>(cls, fields);
}

/** Fetch `toGather` from peer `worker`, expecting `totalNbytes` bytes. */
export class GatherDep {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "GatherDep" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<GatherDep>("GatherDep");
  constructor(
    /** The peer to fetch from. */
    readonly worker: string,
    /** The keys to fetch. */
    readonly toGather: ReadonlySet<string>,
    /** Their total expected size in bytes; the completion event carries it back. */
    readonly totalNbytes: number,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** Run the task `key` on a thread. */
export class Execute {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "Execute" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<Execute>("Execute");
  constructor(
    /** The task to run. */
    readonly key: string,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** Wait a while, then take `worker` out of the busy set (a RetryBusyWorkerEvent). */
export class RetryBusyWorkerLater {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "RetryBusyWorkerLater" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<RetryBusyWorkerLater>("RetryBusyWorkerLater");
  constructor(
    /** The busy peer. */
    readonly worker: string,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** The task finished and its value is in memory here (`task-finished`). */
export class TaskFinishedMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "TaskFinishedMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "task-finished" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<TaskFinishedMsg>("TaskFinishedMsg");
  constructor(
    /** The task that finished. */
    readonly key: string,
    /** The run ID of the ComputeTaskEvent this run answered. */
    readonly runId: number,
    /** The result's size in bytes, or null if unknown. */
    readonly nbytes: number | null,
    /** The value's type as the shell serialises it; weft sends the type name. */
    readonly type: string | null,
    /** The result's type name (`"NoneType"` when unknown). */
    readonly typename: string,
    /** The task's metadata (the seed's `TaskState.metadata`), as plugins set it. */
    readonly metadata: Readonly<Record<string, unknown>>,
    /** The ID of the thread that ran the task, or null when not known. */
    readonly thread: number | null,
    /** The task's timed actions (transfers, the compute, spills). */
    readonly startstops: readonly StartStop[],
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** The task failed (`task-erred`). */
export class TaskErredMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "TaskErredMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "task-erred" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<TaskErredMsg>("TaskErredMsg");
  constructor(
    /** The task that failed. */
    readonly key: string,
    /** The run ID of the ComputeTaskEvent this run answered. */
    readonly runId: number,
    /** The error (the seed's serialised exception); opaque to the state machine. */
    readonly exception: unknown,
    /** Its traceback, or null. */
    readonly traceback: unknown,
    /** The error as text (the seed's `exception_text`). */
    readonly exceptionText: string,
    /** The traceback as text (the seed's `traceback_text`); may be empty. */
    readonly tracebackText: string,
    /** The ID of the thread that ran the task, or null when not known. */
    readonly thread: number | null,
    /** The task's timed actions (transfers, the compute). */
    readonly startstops: readonly StartStop[],
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** The worker no longer holds `key` (`release-worker-data`). */
export class ReleaseWorkerDataMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "ReleaseWorkerDataMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "release-worker-data" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<ReleaseWorkerDataMsg>("ReleaseWorkerDataMsg");
  constructor(
    /** The key released. */
    readonly key: string,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** The task asked to be rescheduled elsewhere (`reschedule`). */
export class RescheduleMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "RescheduleMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "reschedule" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<RescheduleMsg>("RescheduleMsg");
  constructor(
    /** The task to run elsewhere. */
    readonly key: string,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** The task seceded from its thread (`long-running`). */
export class LongRunningMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "LongRunningMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "long-running" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<LongRunningMsg>("LongRunningMsg");
  constructor(
    /** The task that seceded. */
    readonly key: string,
    /** How long it had run before seceding, in seconds; null when not known. */
    readonly computeDuration: number | null,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** These keys are now also in memory here (`add-keys`). */
export class AddKeysMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "AddKeysMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "add-keys" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<AddKeysMsg>("AddKeysMsg");
  constructor(
    /** The keys now in memory here. */
    readonly keys: readonly string[],
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** Ask the scheduler where these keys are (`request-refresh-who-has`). */
export class RequestRefreshWhoHasMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "RequestRefreshWhoHasMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "request-refresh-who-has" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<RequestRefreshWhoHasMsg>("RequestRefreshWhoHasMsg");
  constructor(
    /** The keys whose holders to look up. */
    readonly keys: readonly string[],
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** Answer to a steal request: the task's state here, or null if unknown (`steal-response`). */
export class StealResponseMsg {
  /** The seed's class name; it tags the `Instruction` union. */
  readonly cls = "StealResponseMsg" as const;
  /** The scheduler's stream handler for this message (the seed's `op`). */
  readonly op = "steal-response" as const;
  /** A partial match of this instruction, for tests (the seed's `Instruction.match`). */
  static match = matcher<StealResponseMsg>("StealResponseMsg");
  constructor(
    /** The task the steal request was about. */
    readonly key: string,
    /** The task's state here, or null if this worker does not know it. */
    readonly state: TaskStateState | null,
    /** The stimulus this instruction answers (the seed's `stimulus_id`). */
    readonly stimulusId: string,
  ) {}
}

/** True for instructions that are messages to the scheduler. */
export function isSendMessageToScheduler(inst: Instruction): inst is SendMessageToScheduler {
  return "op" in inst;
}

/**
 * The message dict of a scheduler message, as the worker sends it on the wire:
 * `op`, the fields, `stimulusId`, and `status` for task-finished/task-erred.
 */
export function toMessage(inst: SendMessageToScheduler): Record<string, unknown> {
  if (inst.cls === "TaskFinishedMsg") {
    // The message of every task: built field by field (a rest/spread copy of a
    // class instance takes V8's slow generic path).
    return {
      op: inst.op,
      key: inst.key,
      runId: inst.runId,
      nbytes: inst.nbytes,
      type: inst.type,
      typename: inst.typename,
      metadata: inst.metadata,
      thread: inst.thread,
      startstops: inst.startstops,
      stimulusId: inst.stimulusId,
      status: "OK",
    };
  }
  const { cls: _cls, ...fields } = inst;
  switch (inst.cls) {
    case "TaskErredMsg":
      return { ...fields, status: "error" };
    case "ReleaseWorkerDataMsg":
    case "RescheduleMsg":
    case "LongRunningMsg":
    case "AddKeysMsg":
    case "RequestRefreshWhoHasMsg":
    case "StealResponseMsg":
      return fields;
  }
}
