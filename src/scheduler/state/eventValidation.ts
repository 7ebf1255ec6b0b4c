/**
 * Shape checks for stimuli, run before a stimulus changes anything. A stimulus
 * built by a TypeScript shell is already well typed; these checks guard
 * against messages decoded from the wire. The contents of an `update-graph`'s
 * tasks are checked later (a bad graph is answered to the client, not thrown).
 */

import { isResourceAmount } from "../../util/resourceAmount.ts";
import { showValue } from "../../util/showValue.ts";
import { TASK_STATES } from "../../worker/state/taskState.ts";
import { isStandInClientId } from "./clientInfo.ts";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";

/** The states a worker may report in `steal-response`. */
const WORKER_TASK_STATES: ReadonlySet<string> = new Set(TASK_STATES);

function fail(ev: unknown, what: string): never {
  const e = ev as { kind?: unknown; msg?: { op?: unknown } };
  const name =
    typeof e?.kind === "string"
      ? e.kind === "worker-message" || e.kind === "client-message"
        ? `${e.kind} ${typeof e.msg?.op === "string" ? e.msg.op : showValue(e.msg?.op)}`
        : e.kind
      : "stimulus";
  throw new InvalidStimulus(`invalid ${name}: ${what}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

/** True for an array of strings only. */
export function isStringArray(v: unknown): v is string[] {
  if (!Array.isArray(v)) return false;
  for (const x of v) if (typeof x !== "string") return false;
  return true;
}

/** Why `v` is not `{name: finite amount ≥ 0}`, or null. */
export function resourcesProblem(v: unknown): string | null {
  if (!isObject(v)) return "must be an object {name: amount}";
  for (const [name, amount] of Object.entries(v)) {
    if (!isResourceAmount(amount)) {
      return `resource '${name}' must be a finite number ≥ 0, got ${showValue(amount)}`;
    }
  }
  return null;
}

/** Why `v` is not a non-empty array of worker addresses, hosts or names, or null. */
export function workersProblem(v: unknown): string | null {
  if (!Array.isArray(v) || v.length === 0 || !v.every(isNonEmptyString)) {
    return `must be a non-empty array of worker addresses, hosts or names, got ${showValue(v)}`;
  }
  return null;
}

function checkString(ev: unknown, obj: Record<string, unknown>, field: string): void {
  if (!isNonEmptyString(obj[field])) fail(ev, `${field} must be a non-empty string`);
}

function checkKeys(ev: unknown, obj: Record<string, unknown>, field: string): void {
  if (!isStringArray(obj[field])) fail(ev, `${field} must be an array of keys`);
}

function checkSubmission(ev: unknown, obj: Record<string, unknown>): void {
  const v = obj.submission;
  if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) {
    fail(ev, "submission must be a non-negative integer");
  }
}

function checkRunId(ev: unknown, obj: Record<string, unknown>): void {
  if (!Number.isInteger(obj.runId)) fail(ev, "runId must be an integer");
}

/**
 * Throw {@link InvalidStimulus}, naming the offending field, unless `ev` is a
 * well-formed {@link SchedulerEvent}.
 */
export function validateEventShape(ev: SchedulerEvent): void {
  if (!isObject(ev)) fail(ev, "must be an object");
  const e = ev as unknown as Record<string, unknown>;
  switch (ev.kind) {
    case "remove-worker":
      checkString(ev, e, "worker");
      checkString(ev, e, "stimulusId");
      if (e.expected !== undefined && typeof e.expected !== "boolean") {
        fail(ev, "expected must be a boolean");
      }
      return;
    case "steal-request":
      checkString(ev, e, "key");
      checkString(ev, e, "victim");
      if (e.thief !== undefined) checkString(ev, e, "thief");
      checkString(ev, e, "stimulusId");
      return;
    case "balance":
    case "reduce-replicas":
      checkString(ev, e, "stimulusId");
      return;
    case "worker-message":
      checkString(ev, e, "worker");
      if (!isObject(ev.msg)) fail(ev, "msg must be an object");
      validateWorkerMessage(ev);
      return;
    case "client-message":
      if (!isObject(ev.msg)) fail(ev, "msg must be an object");
      validateClientMessage(ev);
      return;
    default:
      fail(ev, `unknown kind ${showValue((ev as { kind?: unknown }).kind)}`);
  }
}

function validateWorkerMessage(ev: SchedulerEvent & { kind: "worker-message" }): void {
  const msg = ev.msg;
  const m = msg as unknown as Record<string, unknown>;
  checkString(ev, m, "stimulusId");
  switch (msg.op) {
    case "register-worker": {
      checkString(ev, m, "address");
      if (msg.address !== ev.worker) fail(ev, `address ${msg.address} ≠ sender ${ev.worker}`);
      if (!Number.isInteger(msg.nthreads) || msg.nthreads < 1) {
        fail(ev, `nthreads must be a positive integer, got ${showValue(msg.nthreads)}`);
      }
      const problem = resourcesProblem(msg.resources);
      if (problem !== null) fail(ev, `resources ${problem}`);
      if (
        msg.memoryLimit !== undefined &&
        !(Number.isSafeInteger(msg.memoryLimit) && msg.memoryLimit > 0)
      ) {
        fail(ev, `memoryLimit must be a positive integer, got ${showValue(msg.memoryLimit)}`);
      }
      if (msg.nanny !== undefined && typeof msg.nanny !== "boolean") {
        fail(ev, `nanny must be a boolean, got ${showValue(msg.nanny)}`);
      }
      if (msg.name !== undefined && !isNonEmptyString(msg.name)) {
        fail(ev, `name must be a non-empty string, got ${showValue(msg.name)}`);
      }
      return;
    }
    case "heartbeat-worker": {
      const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
      if (msg.memory !== undefined && !count(msg.memory)) {
        fail(ev, `memory must be a count of bytes, got ${showValue(msg.memory)}`);
      }
      if (msg.spilled === undefined) return;
      const sp: unknown = msg.spilled;
      if (!isObject(sp) || !count(sp.keys) || !count(sp.bytes)) {
        fail(ev, `spilled must be {keys, bytes} counts, got ${showValue(sp)}`);
      }
      return;
    }
    case "worker-status-change":
      if (msg.status !== "running" && msg.status !== "paused") {
        fail(ev, `status must be "running" or "paused", got ${showValue(msg.status)}`);
      }
      return;
    case "task-finished":
      checkString(ev, m, "key");
      checkRunId(ev, m);
      // A whole number of bytes below 2^53: the holders' totals add and subtract sizes,
      // which is exact for such integers. 1e300 (or 1.5) bytes would leave a total that
      // no longer returns to zero when the data is freed.
      if (msg.nbytes !== null && !(Number.isSafeInteger(msg.nbytes) && msg.nbytes >= 0)) {
        fail(
          ev,
          `nbytes must be an integer from 0 to 2^53 - 1 or null, got ${showValue(msg.nbytes)}`,
        );
      }
      if (typeof msg.typename !== "string") fail(ev, "typename must be a string");
      if (msg.startstops !== undefined) {
        if (!Array.isArray(msg.startstops)) fail(ev, "startstops must be an array");
        for (const ss of msg.startstops as unknown[]) {
          if (
            !isObject(ss) ||
            typeof ss.action !== "string" ||
            typeof ss.start !== "number" ||
            typeof ss.stop !== "number"
          ) {
            fail(ev, "startstops must hold {action: string, start: number, stop: number}");
          }
        }
      }
      if (msg.metadata !== undefined && msg.metadata !== null) {
        if (!isObject(msg.metadata)) fail(ev, "metadata must be an object");
        // Read as the handler reads it (merged into the task's): a field that throws when
        // read throws here, refused as malformed, not out of the handler.
        void { ...msg.metadata };
      }
      return;
    case "task-erred":
      checkString(ev, m, "key");
      checkRunId(ev, m);
      if (typeof msg.exceptionText !== "string") fail(ev, "exceptionText must be a string");
      if (typeof msg.tracebackText !== "string") fail(ev, "tracebackText must be a string");
      if (msg.fetchFailed !== undefined && typeof msg.fetchFailed !== "boolean") {
        fail(ev, "fetchFailed must be a boolean");
      }
      return;
    case "add-keys":
    case "request-refresh-who-has":
      checkKeys(ev, m, "keys");
      return;
    case "release-worker-data":
    case "reschedule":
      checkString(ev, m, "key");
      return;
    case "long-running":
      checkString(ev, m, "key");
      if (
        msg.computeDuration !== null &&
        (typeof msg.computeDuration !== "number" || !Number.isFinite(msg.computeDuration))
      ) {
        fail(ev, "computeDuration must be a finite number or null");
      }
      if (msg.runId !== undefined) checkRunId(ev, m);
      return;
    case "steal-response":
      checkString(ev, m, "key");
      if (msg.state !== null && !WORKER_TASK_STATES.has(msg.state)) {
        fail(ev, `state must be a worker task state or null, got ${showValue(msg.state)}`);
      }
      return;
    default:
      fail(ev, `unknown op ${showValue((msg as { op?: unknown }).op)}`);
  }
}

function validateClientMessage(ev: SchedulerEvent & { kind: "client-message" }): void {
  const msg = ev.msg;
  const m = msg as unknown as Record<string, unknown>;
  checkString(ev, m, "stimulusId");
  checkString(ev, m, "clientId");
  if (isStandInClientId(msg.clientId)) fail(ev, `clientId ${msg.clientId} is reserved`);
  switch (msg.op) {
    case "update-graph":
      if (!(msg.tasks instanceof Map)) fail(ev, "tasks must be a Map key → task");
      checkKeys(ev, m, "keys");
      checkSubmission(ev, m);
      return;
    case "client-desires-keys":
      checkKeys(ev, m, "keys");
      checkSubmission(ev, m);
      return;
    case "client-releases-keys":
    case "fire-and-forget":
    case "retry":
      checkKeys(ev, m, "keys");
      return;
    case "cancel-keys":
      checkKeys(ev, m, "keys");
      if (msg.force !== undefined && typeof msg.force !== "boolean") {
        fail(ev, "force must be a boolean");
      }
      if (msg.reason !== undefined && typeof msg.reason !== "string") {
        fail(ev, "reason must be a string");
      }
      return;
    case "close-client":
    case "restart":
      return;
    case "update-data":
      checkScatteredKeys(ev, m.keys);
      return;
    case "replicate": {
      checkKeys(ev, m, "keys");
      if (msg.n !== undefined && !(Number.isSafeInteger(msg.n) && msg.n >= 1)) {
        fail(ev, `n must be an integer ≥ 1, got ${showValue(msg.n)}`);
      }
      const workers = msg.workers === undefined ? null : workersProblem(msg.workers);
      if (workers !== null) fail(ev, `workers ${workers}`);
      return;
    }
    case "publish-dataset":
      checkDatasetName(ev, m);
      checkKeys(ev, m, "keys");
      if (msg.override !== undefined && typeof msg.override !== "boolean") {
        fail(ev, "override must be a boolean");
      }
      return;
    case "get-dataset":
      checkDatasetName(ev, m);
      checkSubmission(ev, m);
      return;
    case "unpublish-dataset":
      checkDatasetName(ev, m);
      return;
    case "retire-workers": {
      if (msg.n !== undefined) {
        if (!(Number.isSafeInteger(msg.n) && msg.n >= 1)) {
          fail(ev, `n must be an integer ≥ 1, got ${showValue(msg.n)}`);
        }
        if (msg.workers !== undefined) fail(ev, "give workers or n, not both");
        return;
      }
      if (msg.workers === undefined) return; // the idle workers the cluster can spare
      const workers = workersProblem(msg.workers);
      if (workers !== null) fail(ev, `workers ${workers}`);
      return;
    }
    case "restart-workers": {
      const workers = workersProblem(msg.workers);
      if (workers !== null) fail(ev, `workers ${workers}`);
      return;
    }
    case "rebalance": {
      if (msg.keys !== undefined) checkKeys(ev, m, "keys");
      const workers = msg.workers === undefined ? null : workersProblem(msg.workers);
      if (workers !== null) fail(ev, `workers ${workers}`);
      return;
    }
    default:
      fail(ev, `unknown op ${showValue((msg as { op?: unknown }).op)}`);
  }
}

/** A dataset's `name`: a non-empty string. */
function checkDatasetName(ev: unknown, m: Record<string, unknown>): void {
  if (!isNonEmptyString(m.name))
    fail(ev, `name must be a non-empty string, got ${showValue(m.name)}`);
}

/** `update-data`'s keys: each named once, with its workers, size and type name. */
function checkScatteredKeys(ev: unknown, keys: unknown): void {
  if (!Array.isArray(keys)) fail(ev, "keys must be an array of {key, workers, nbytes, typename}");
  const seen = new Set<string>();
  for (let i = 0; i < keys.length; i++) {
    const entry: unknown = keys[i];
    if (!isObject(entry)) fail(ev, `keys[${i}] must be an object {key, workers, nbytes, typename}`);
    if (!isNonEmptyString(entry.key)) fail(ev, `keys[${i}].key must be a non-empty string`);
    if (seen.has(entry.key)) fail(ev, `key '${entry.key}' is listed twice`);
    seen.add(entry.key);
    const workers = workersProblem(entry.workers);
    if (workers !== null) fail(ev, `keys[${i}].workers ${workers}`);
    // As task-finished's: a size the holders' totals cannot add and subtract exactly
    // (1e300, 1.5) would leave them wrong for good once the value is freed.
    const { nbytes } = entry;
    if (!(Number.isSafeInteger(nbytes) && (nbytes as number) >= 0)) {
      fail(ev, `keys[${i}].nbytes must be an integer from 0 to 2^53 - 1, got ${showValue(nbytes)}`);
    }
    if (typeof entry.typename !== "string") {
      fail(ev, `keys[${i}].typename must be a string, got ${showValue(entry.typename)}`);
    }
  }
}
