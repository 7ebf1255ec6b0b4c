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
    readonly cls: T["cls"],
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

  asymmetricMatch(other: unknown): boolean {
    return this.matches(other);
  }

  toString(): string {
    return `${this.cls}(${Object.entries(this.fields)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(", ")}) (partial match)`;
  }

  toAsymmetricMatcher(): string {
    return this.toString();
  }
}

/** Structural equality for plain data, Sets (as sets) and Maps. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Set || b instanceof Set) {
    const sa = a instanceof Set ? a : new Set(a as Iterable<unknown>);
    const sb = b instanceof Set ? b : new Set(b as Iterable<unknown>);
    if (sa.size !== sb.size) return false;
    for (const x of sa) if (!sb.has(x)) return false;
    return true;
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k))) return false;
    return true;
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
  readonly cls = "GatherDep" as const;
  static match = matcher<GatherDep>("GatherDep");
  constructor(
    readonly worker: string,
    readonly toGather: ReadonlySet<string>,
    readonly totalNbytes: number,
    readonly stimulusId: string,
  ) {}
}

/** Run the task `key` on a thread. */
export class Execute {
  readonly cls = "Execute" as const;
  static match = matcher<Execute>("Execute");
  constructor(
    readonly key: string,
    readonly stimulusId: string,
  ) {}
}

/** Wait a while, then take `worker` out of the busy set (a RetryBusyWorkerEvent). */
export class RetryBusyWorkerLater {
  readonly cls = "RetryBusyWorkerLater" as const;
  static match = matcher<RetryBusyWorkerLater>("RetryBusyWorkerLater");
  constructor(
    readonly worker: string,
    readonly stimulusId: string,
  ) {}
}

/** The task finished and its value is in memory here (`task-finished`). */
export class TaskFinishedMsg {
  readonly cls = "TaskFinishedMsg" as const;
  readonly op = "task-finished" as const;
  static match = matcher<TaskFinishedMsg>("TaskFinishedMsg");
  constructor(
    readonly key: string,
    readonly runId: number,
    readonly nbytes: number | null,
    /** The value's type as the shell serialises it; weft sends the type name. */
    readonly type: string | null,
    readonly typename: string,
    readonly metadata: Readonly<Record<string, unknown>>,
    readonly thread: number | null,
    readonly startstops: readonly StartStop[],
    readonly stimulusId: string,
  ) {}
}

/** The task failed (`task-erred`). */
export class TaskErredMsg {
  readonly cls = "TaskErredMsg" as const;
  readonly op = "task-erred" as const;
  static match = matcher<TaskErredMsg>("TaskErredMsg");
  constructor(
    readonly key: string,
    readonly runId: number,
    readonly exception: unknown,
    readonly traceback: unknown,
    readonly exceptionText: string,
    readonly tracebackText: string,
    readonly thread: number | null,
    readonly startstops: readonly StartStop[],
    readonly stimulusId: string,
  ) {}
}

/** The worker no longer holds `key` (`release-worker-data`). */
export class ReleaseWorkerDataMsg {
  readonly cls = "ReleaseWorkerDataMsg" as const;
  readonly op = "release-worker-data" as const;
  static match = matcher<ReleaseWorkerDataMsg>("ReleaseWorkerDataMsg");
  constructor(
    readonly key: string,
    readonly stimulusId: string,
  ) {}
}

/** The task asked to be rescheduled elsewhere (`reschedule`). */
export class RescheduleMsg {
  readonly cls = "RescheduleMsg" as const;
  readonly op = "reschedule" as const;
  static match = matcher<RescheduleMsg>("RescheduleMsg");
  constructor(
    readonly key: string,
    readonly stimulusId: string,
  ) {}
}

/** The task seceded from its thread (`long-running`). */
export class LongRunningMsg {
  readonly cls = "LongRunningMsg" as const;
  readonly op = "long-running" as const;
  static match = matcher<LongRunningMsg>("LongRunningMsg");
  constructor(
    readonly key: string,
    readonly computeDuration: number | null,
    readonly stimulusId: string,
  ) {}
}

/** These keys are now also in memory here (`add-keys`). */
export class AddKeysMsg {
  readonly cls = "AddKeysMsg" as const;
  readonly op = "add-keys" as const;
  static match = matcher<AddKeysMsg>("AddKeysMsg");
  constructor(
    readonly keys: readonly string[],
    readonly stimulusId: string,
  ) {}
}

/** Ask the scheduler where these keys are (`request-refresh-who-has`). */
export class RequestRefreshWhoHasMsg {
  readonly cls = "RequestRefreshWhoHasMsg" as const;
  readonly op = "request-refresh-who-has" as const;
  static match = matcher<RequestRefreshWhoHasMsg>("RequestRefreshWhoHasMsg");
  constructor(
    readonly keys: readonly string[],
    readonly stimulusId: string,
  ) {}
}

/** Answer to a steal request: the task's state here, or null if unknown (`steal-response`). */
export class StealResponseMsg {
  readonly cls = "StealResponseMsg" as const;
  readonly op = "steal-response" as const;
  static match = matcher<StealResponseMsg>("StealResponseMsg");
  constructor(
    readonly key: string,
    readonly state: TaskStateState | null,
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
