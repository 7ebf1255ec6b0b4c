/**
 * Turn the messages the scheduler sends (`compute-task`, `free-keys`, …) into
 * state machine events, checking every field first: a malformed message is
 * rejected with a {@link MalformedMessageError} saying what is wrong, and never
 * reaches the state machine.
 */

import type { SchedulerToWorkerOp } from "../protocol/messagesWorker.ts";
import { isResourceAmount } from "../util/resourceAmount.ts";
import { showValue } from "../util/showValue.ts";
import { describeValue, isStringList } from "../util/valueShapes.ts";
import { FIELDS_CHECKED } from "./state/eventFields.ts";
import {
  AcquireReplicasEvent,
  ComputeTaskEvent,
  FreeKeysEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  type StateMachineEvent,
  StealRequestEvent,
  UnpauseEvent,
} from "./state/events.ts";

/** A message from the scheduler that cannot be acted on. */
export class MalformedMessageError extends Error {
  override name = "MalformedMessageError";
}

type Rec = Record<string, unknown>;

function fail(op: string, why: string): never {
  throw new MalformedMessageError(`malformed ${op} message: ${why}`);
}

function isRecord(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Map);
}

function str(m: Rec, op: string, field: string): string {
  const v = m[field];
  if (typeof v !== "string") fail(op, `${field} must be a string, got ${describeValue(v)}`);
  return v;
}

function int(m: Rec, op: string, field: string): number {
  const v = m[field];
  if (!Number.isSafeInteger(v)) fail(op, `${field} must be an integer, got ${describeValue(v)}`);
  return v as number;
}

function num(m: Rec, op: string, field: string, dflt?: number): number {
  const v = m[field] ?? dflt;
  if (typeof v !== "number" || Number.isNaN(v))
    fail(op, `${field} must be a number, got ${describeValue(v)}`);
  return v;
}

function strList(m: Rec, op: string, field: string): string[] {
  const v = m[field];
  if (!isStringList(v)) fail(op, `${field} must be an array of strings, got ${describeValue(v)}`);
  return v;
}

/** Shared by every empty map of a message (events never modify their maps). */
const EMPTY_MAP: ReadonlyMap<string, never> = new Map<string, never>();
const EMPTY_RECORD: Rec = Object.freeze({});

/** `{key: value}` from a Map (taken as it is) or a plain object (copied), every entry checked. */
function mapOf<V>(
  m: Rec,
  op: string,
  field: string,
  check: (v: unknown) => v is V,
  what: string,
  dflt?: Rec,
): ReadonlyMap<string, V> {
  const v = m[field] ?? dflt;
  let out: Map<string, V> | null = null;
  if (v instanceof Map) {
    // Checked and taken as it is: the sender does not touch a message once sent.
    for (const [k, x] of v as Map<unknown, unknown>) {
      if (typeof k !== "string") fail(op, `${field} keys must be strings`);
      if (!check(x))
        fail(op, `${field}[${showValue(k, 200)}] must be ${what}, got ${describeValue(x)}`);
    }
    return v.size === 0 ? (EMPTY_MAP as ReadonlyMap<string, V>) : (v as ReadonlyMap<string, V>);
  } else if (isRecord(v)) {
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const x = v[k];
      if (!check(x))
        fail(op, `${field}[${showValue(k, 200)}] must be ${what}, got ${describeValue(x)}`);
      (out ??= new Map()).set(k, x);
    }
  } else {
    fail(op, `${field} must be an object, got ${describeValue(v)}`);
  }
  return out ?? (EMPTY_MAP as ReadonlyMap<string, V>);
}

/**
 * A size in bytes: a whole number below 2^53, so that the transfer totals it is added to
 * and later subtracted from return exactly to where they were.
 */
const isByteCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;

/** True if a string occurs twice in `xs` (without a `Set` for the usual one or two holders). */
function hasDuplicate(xs: readonly string[]): boolean {
  if (xs.length > 8) return new Set(xs).size !== xs.length;
  for (let i = 1; i < xs.length; i++) {
    for (let j = 0; j < i; j++) if (xs[i] === xs[j]) return true;
  }
  return false;
}

/** `whoHas` and `nbytes` with the same keys, each key held by at least one worker, listed once. */
function whoHasAndNbytes(
  m: Rec,
  op: string,
): [ReadonlyMap<string, string[]>, ReadonlyMap<string, number>] {
  const whoHas = mapOf(m, op, "whoHas", isStringList, "an array of worker addresses");
  const nbytes = mapOf(m, op, "nbytes", isByteCount, "an integer from 0 to 2^53 - 1");
  for (const [k, workers] of whoHas) {
    if (!nbytes.has(k)) fail(op, `nbytes has no entry for ${showValue(k, 200)}`);
    if (workers.length === 0) fail(op, `whoHas[${showValue(k, 200)}] lists no worker`);
    if (hasDuplicate(workers)) fail(op, `whoHas[${showValue(k, 200)}] lists a worker twice`);
  }
  for (const k of nbytes.keys()) {
    if (!whoHas.has(k)) fail(op, `whoHas has no entry for ${showValue(k, 200)}`);
  }
  return [whoHas, nbytes];
}

/**
 * A `compute-task` restricted to a resource this worker does not have: the state
 * machine raises the seed's KeyError on it (`available_resources[resource]`), the next
 * time it looks for a task to run, which fails the worker. A scheduler sends a task
 * only to a worker with its resources, so such a message is refused here.
 */
function unknownResource(
  restrictions: ReadonlyMap<string, number>,
  resources: ReadonlyMap<string, number>,
): string | null {
  for (const name of restrictions.keys()) if (!resources.has(name)) return name;
  return null;
}

function computeTask(m: Rec, resources: ReadonlyMap<string, number> | undefined): ComputeTaskEvent {
  const op = "compute-task";
  const key = str(m, op, "key");
  const [whoHas, nbytes] = whoHasAndNbytes(m, op);
  if (whoHas.has(key)) fail(op, `task ${showValue(key, 200)} depends on itself`);
  const priority = m.priority;
  if (
    !Array.isArray(priority) ||
    !priority.every((p) => typeof p === "number" && Number.isFinite(p))
  ) {
    fail(op, "priority must be an array of finite numbers");
  }
  const runSpec = m.runSpec ?? null;
  if (runSpec !== null && typeof runSpec !== "object")
    fail(op, "runSpec must be an object or null");
  const annotations = m.annotations ?? EMPTY_RECORD;
  if (!isRecord(annotations)) fail(op, "annotations must be an object");
  const spanId = m.spanId ?? null;
  if (spanId !== null && typeof spanId !== "string") fail(op, "spanId must be a string or null");
  const actor = m.actor ?? false;
  if (typeof actor !== "boolean") fail(op, "actor must be a boolean");
  const resourceRestrictions = mapOf(
    m,
    op,
    "resourceRestrictions",
    isResourceAmount,
    "a finite number ≥ 0",
    EMPTY_RECORD,
  );
  const missing = resources === undefined ? null : unknownResource(resourceRestrictions, resources);
  if (missing !== null) {
    const have = [...resources!.keys()].map((r) => showValue(r, 200)).join(", ");
    fail(
      op,
      `task ${showValue(key, 200)} is restricted to the resource ${showValue(missing, 200)}, which this worker does not have (it has ${have === "" ? "none" : have})`,
    );
  }
  return new ComputeTaskEvent(
    {
      key,
      runId: int(m, op, "runId"),
      whoHas,
      nbytes,
      priority: priority as number[],
      duration: num(m, op, "duration", 0.5),
      runSpec,
      resourceRestrictions,
      actor,
      annotations,
      spanId,
      stimulusId: str(m, op, "stimulusId"),
    },
    // Every field was checked above, more strictly than the constructor would: once a task is enough.
    FIELDS_CHECKED,
  );
}

/**
 * The event for a scheduler message, or null for ops that are not events of
 * the state machine. Throws a {@link MalformedMessageError}. With `resources`
 * (the worker's own), a `compute-task` restricted to another resource is refused.
 */
export function schedulerMessageToEvent(
  msg: unknown,
  resources?: ReadonlyMap<string, number>,
): StateMachineEvent {
  if (!isRecord(msg))
    throw new MalformedMessageError("a scheduler message must be an object with an op");
  const op = msg.op as SchedulerToWorkerOp | unknown;
  if (typeof op !== "string")
    throw new MalformedMessageError("a scheduler message must have a string op");
  switch (op as SchedulerToWorkerOp) {
    case "compute-task":
      return computeTask(msg, resources);
    case "free-keys":
      return new FreeKeysEvent({
        keys: strList(msg, op, "keys"),
        stimulusId: str(msg, op, "stimulusId"),
      });
    case "remove-replicas":
      return new RemoveReplicasEvent({
        keys: strList(msg, op, "keys"),
        stimulusId: str(msg, op, "stimulusId"),
      });
    case "acquire-replicas": {
      const [whoHas, nbytes] = whoHasAndNbytes(msg, op);
      return new AcquireReplicasEvent({ whoHas, nbytes, stimulusId: str(msg, op, "stimulusId") });
    }
    case "refresh-who-has":
      return new RefreshWhoHasEvent({
        whoHas: mapOf(msg, op, "whoHas", isStringList, "an array of worker addresses"),
        stimulusId: str(msg, op, "stimulusId"),
      });
    case "steal-request":
      return new StealRequestEvent({
        key: str(msg, op, "key"),
        stimulusId: str(msg, op, "stimulusId"),
      });
    case "remove-worker":
      return new RemoveWorkerEvent({
        worker: str(msg, op, "worker"),
        stimulusId: str(msg, op, "stimulusId"),
      });
    case "pause":
      return new PauseEvent({ stimulusId: str(msg, op, "stimulusId") });
    case "unpause":
      return new UnpauseEvent({ stimulusId: str(msg, op, "stimulusId") });
    default:
      throw new MalformedMessageError(`unknown scheduler op ${showValue(op)}`);
  }
}
