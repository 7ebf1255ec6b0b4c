/**
 * The worker's `update_data` handler (Dask's `Worker.update_data`): a client
 * scattering values puts them straight into this worker's memory, as an
 * `UpdateDataEvent`, and is told each value's size and type name, which it
 * passes on to the scheduler.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { showValue } from "../util/showValue.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { mapEntries } from "./dataServer.ts";
import { FreeKeysEvent, type StateMachineEvent, UpdateDataEvent } from "./state/events.ts";
import type { TaskStateState } from "./state/taskState.ts";
import type { WorkerState } from "./state/workerState.ts";

/**
 * The states of a task no value may be put in place of: this worker computes
 * it (or is computing it), or is fetching it (the fetch's bookkeeping would
 * outlive it: Dask's `validate_state` fails), with why.
 */
const TAKES_NO_VALUE: ReadonlyMap<TaskStateState, string> = new Map<TaskStateState, string>([
  ...(
    [
      "waiting",
      "ready",
      "constrained",
      "executing",
      "long-running",
      "cancelled",
      "resumed",
    ] as const
  ).map((st) => [st, "this worker computes it, and takes no value for it"] as const),
  ["flight", "this worker is fetching it from a peer"],
]);

/** What `update_data` says of each key it was given. */
export type UpdateDataResponse = {
  readonly status: "OK";
  /** The keys now in memory here: size in bytes and type name. */
  readonly stored: Readonly<Record<string, { readonly nbytes: number; readonly typename: string }>>;
  /** The keys that could not be stored (the data store refused them), with why. */
  readonly failed: Readonly<Record<string, string>>;
};

/**
 * `update_data` on a worker that is closing (retired, its lifetime over):
 * not the values' fault, so a scatter sends them to another worker.
 */
export class WorkerClosingError extends Error {
  override name = "WorkerClosingError";
}

/** What the handler needs of its worker. */
export interface UpdateDataHost {
  /** The worker's state machine. */
  readonly state: WorkerState;
  /** Why the worker takes no data now (it is closing), or null. */
  refusal(): string | null;
  /** Hand events to the state machine (and run the instructions it gives). */
  handleStimulus(...stims: StateMachineEvent[]): void;
}

/** The `update_data` rpc handler: `{data: Map key → value, stimulusId?}` → {@link UpdateDataResponse}. */
export function updateDataHandler(
  worker: UpdateDataHost,
): (args: Record<string, unknown>) => UpdateDataResponse {
  return (args) => {
    const refusal = worker.refusal();
    if (refusal !== null) throw new WorkerClosingError(`update_data refused: ${refusal}`);
    const given = parseData(args.data);
    const stimulusId =
      typeof args.stimulusId === "string" && args.stimulusId !== ""
        ? args.stimulusId
        : newStimulusId("update-data");
    // Null-prototype maps: a key "__proto__" is a key like any other.
    const stored: Record<string, { nbytes: number; typename: string }> = Object.create(null);
    const refused: Record<string, string> = Object.create(null);
    const state = worker.state;
    // A value for a task this worker was told to compute would take the place of its
    // result without the scheduler hearing of it (it waits for the run forever), or fail
    // the state machine (an executing task's run ends in memory it did not put there):
    // refused, and the task left alone (TAKES_NO_VALUE). Dask's update_data trusts its
    // callers; here any peer may call it.
    const data = new Map<string, unknown>();
    for (const [key, value] of given) {
      const st = state.tasks.get(key)?.state;
      const why = st === undefined ? undefined : TAKES_NO_VALUE.get(st);
      if (why !== undefined) {
        refused[key] = `it is ${st} here: ${why}`;
      } else {
        data.set(key, value);
      }
    }
    if (data.size > 0) worker.handleStimulus(new UpdateDataEvent({ data, stimulusId }));
    const failed: Record<string, string> = Object.create(null);
    for (const key of data.keys()) {
      const ts = state.tasks.get(key);
      if (ts?.state === "memory") {
        stored[key] = { nbytes: ts.getNbytes(), typename: ts.type ?? "unknown" };
      } else {
        failed[key] = ts?.exceptionText || `it is ${ts?.state ?? "gone"} here`;
      }
    }
    // The scheduler never hears of a key that failed here, so nobody else will free it.
    const keys = Object.keys(failed);
    if (keys.length > 0) worker.handleStimulus(new FreeKeysEvent({ keys, stimulusId }));
    return { status: "OK", stored, failed: { ...refused, ...failed } };
  };
}

/** `data` as a Map of non-empty keys to unwrapped values; throws a TypeError naming the problem. */
function parseData(data: unknown): Map<string, unknown> {
  const entries = mapEntries(data);
  if (entries === null) {
    throw new TypeError(`update_data: data must be a map of key → value, got ${showValue(data)}`);
  }
  const out = new Map<string, unknown>();
  for (const [key, value] of entries) {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`update_data: keys must be non-empty strings, got ${showValue(key)}`);
    }
    out.set(key, ClonedValue.unwrap(value));
  }
  if (out.size === 0) throw new TypeError("update_data: no data");
  return out;
}

/**
 * Check an `update_data` answer from `worker` for the `sent` keys: each is
 * stored (with a size ≥ 0 and a type name) or failed (with why); a key the
 * answer leaves out is failed. Throws a TypeError for an answer of another shape.
 */
export function parseUpdateDataResponse(
  response: unknown,
  sent: readonly string[],
  worker: string,
): UpdateDataResponse {
  const bad = (why: string): never => {
    throw new TypeError(`unexpected update_data answer from ${worker}: ${why}`);
  };
  if (typeof response !== "object" || response === null) bad("not an object");
  const r = response as Record<string, unknown>;
  if (r.status !== "OK") bad(`status ${showValue(r.status)}`);
  const storedIn = r.stored;
  const failedIn = r.failed;
  if (typeof storedIn !== "object" || storedIn === null) bad("stored is not an object");
  if (typeof failedIn !== "object" || failedIn === null) bad("failed is not an object");
  const stored: Record<string, { nbytes: number; typename: string }> = Object.create(null);
  const failed: Record<string, string> = Object.create(null);
  for (const key of sent) {
    const s = Object.hasOwn(storedIn as object, key)
      ? (storedIn as Record<string, unknown>)[key]
      : undefined;
    if (s !== undefined) {
      const { nbytes, typename } = (s ?? {}) as { nbytes?: unknown; typename?: unknown };
      if (typeof nbytes !== "number" || !(nbytes >= 0) || typeof typename !== "string") {
        bad(`the size or type name of '${key}' is malformed`);
      }
      stored[key] = { nbytes: nbytes as number, typename: typename as string };
      continue;
    }
    const why = Object.hasOwn(failedIn as object, key)
      ? (failedIn as Record<string, unknown>)[key]
      : undefined;
    failed[key] = typeof why === "string" ? why : "the worker did not say it stored it";
  }
  return { status: "OK", stored, failed };
}
