/**
 * Small helpers for the unit tests of the worker state machine, in the spirit of the
 * `ws` and `ws_with_running_task` fixtures and `assert_story` of Dask's test suite.
 */
import { expect } from "vitest";
import { TaskError } from "./errorMessage.ts";
import {
  AcquireReplicasEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  SecedeEvent,
} from "./events.ts";
import { Execute, GatherDep, type Instruction } from "./instructions.ts";
import type { LogEntry } from "./log.ts";
import { WorkerState, type WorkerStateOptions } from "./workerState.ts";

/** The address of the WorkerState under test. */
export const ADDR = "127.0.0.1:1";
/** Peer workers. */
export const W2 = "127.0.0.1:2";
export const W3 = "127.0.0.1:3";

// ------------------------------------------------------------- event shorthands

type ComputeOpts = Omit<Parameters<typeof ComputeTaskEvent.dummy>[1], "stimulusId">;

/** `ComputeTaskEvent.dummy(key, {...o, stimulusId})`. */
export const compute = (key: string, stimulusId: string, o: ComputeOpts = {}) =>
  ComputeTaskEvent.dummy(key, { ...o, stimulusId });
export const free = (keys: string[], stimulusId: string) => new FreeKeysEvent({ keys, stimulusId });
export const success = (key: string, stimulusId: string, value: unknown = 123) =>
  ExecuteSuccessEvent.dummy(key, { value, stimulusId });
export const failure = (key: string, stimulusId: string) =>
  ExecuteFailureEvent.dummy(key, { stimulusId });
export const secede = (key: string, stimulusId: string, computeDuration = 1.5) =>
  new SecedeEvent({ key, computeDuration, stimulusId });
/** A GatherDepSuccessEvent from `worker` with `data`. */
export const gathered = (
  worker: string,
  data: Record<string, unknown>,
  stimulusId: string,
  totalNbytes = 1,
) => new GatherDepSuccessEvent({ worker, data, totalNbytes, stimulusId });
/** A GatherDepNetworkFailureEvent from `worker`. */
export const networkFailure = (worker: string, stimulusId: string, totalNbytes = 1) =>
  new GatherDepNetworkFailureEvent({ worker, totalNbytes, stimulusId });
/** An AcquireReplicasEvent for one key. */
export const acquire = (key: string, workers: string[], stimulusId: string, nbytes = 1) =>
  new AcquireReplicasEvent({ whoHas: { [key]: workers }, nbytes: { [key]: nbytes }, stimulusId });
/** The GatherDep instruction expected for these keys. */
export const gatherDep = (
  worker: string,
  keys: string[],
  totalNbytes: number,
  stimulusId: string,
) => new GatherDep(worker, new Set(keys), totalNbytes, stimulusId);

/** An empty WorkerState, as Dask's `ws` fixture. */
export function newWs(o: WorkerStateOptions = {}): WorkerState {
  return new WorkerState({
    address: ADDR,
    nthreads: 1,
    validate: true,
    transitionCounterMax: 50_000,
    ...o,
  });
}

/**
 * A WorkerState with resources `{R: 1}` running task `x`, which holds `R: 1` and is
 * executing or, after a SecedeEvent, long-running (Dask's `ws_with_running_task`).
 */
export function wsWithRunningTask(
  state: "executing" | "long-running",
  o: WorkerStateOptions = {},
): WorkerState {
  const ws = newWs({ resources: { R: 1 }, ...o });
  const instructions = ws.handleStimulus(
    ComputeTaskEvent.dummy("x", { resourceRestrictions: { R: 1 }, stimulusId: "compute" }),
  );
  expect(instructions).toEqual([new Execute("x", "compute")]);
  if (state === "long-running") {
    ws.handleStimulus(new SecedeEvent({ key: "x", computeDuration: 1.0, stimulusId: "secede" }));
  }
  expect(ws.task("x").state).toBe(state);
  return ws;
}

/** The logged recommendations `{key: state}` as a plain object, whatever their representation. */
function plainRecs(recs: unknown): Record<string, string> {
  if (recs instanceof Map) return Object.fromEntries(recs);
  const r = recs as { toMap?: () => Map<string, string> };
  if (typeof r?.toMap === "function") return Object.fromEntries(r.toMap());
  return recs as Record<string, string>;
}

/** A transition record: `[key, start, recommended, final, recs, stimulusId, time]`. */
export function isTransitionRecord(entry: LogEntry): boolean {
  return entry.length === 7 && typeof entry[1] === "string" && typeof entry[3] === "string";
}

/**
 * The story of keys or stimulus ids, as Dask's `assert_story` compares it: each record
 * without its stimulus id and timestamp, the recommendations as a plain object.
 */
export function story(ws: WorkerState, ...keysOrStimuli: string[]): unknown[][] {
  return ws.story(...keysOrStimuli).map((entry) => {
    const out = entry.slice(0, -2);
    if (isTransitionRecord(entry)) out[4] = plainRecs(entry[4]);
    return out;
  });
}

/** `assert_story(..., strict=False)`: `expected` appears in `actual` in order, gaps allowed. */
export function expectSubsequence(actual: readonly unknown[], expected: readonly unknown[]): void {
  let i = 0;
  for (const rec of actual) {
    if (i < expected.length && equals(rec, expected[i])) i++;
  }
  if (i < expected.length) {
    expect.fail(
      `record ${JSON.stringify(expected[i])} not found in order in story:\n${actual
        .map((r) => `  ${JSON.stringify(r, setsAsArrays)}`)
        .join("\n")}`,
    );
  }
}

function equals(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}

function setsAsArrays(_k: string, v: unknown): unknown {
  return v instanceof Set ? [...v] : v;
}

/** Instructions of one class. */
export function ofClass<C extends Instruction["cls"]>(
  instructions: readonly Instruction[],
  cls: C,
): Extract<Instruction, { cls: C }>[] {
  return instructions.filter((i) => i.cls === cls) as Extract<Instruction, { cls: C }>[];
}

/** A data store that fails to store the keys `failOn` accepts, like a SpillBuffer that can't pickle. */
export class FailingStore extends Map<string, unknown> {
  constructor(private readonly failOn: (key: string) => boolean) {
    super();
  }

  override set(key: string, value: unknown): this {
    // Map's constructor calls set() before failOn is assigned; it only does so with entries.
    if (this.failOn?.(key)) {
      throw new TaskError(`MemoryError: cannot store ${key}`, '  File "spill.py", line 1');
    }
    return super.set(key, value);
  }
}

/** The error `f` throws; fails the test if it throws nothing. */
export function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("nothing was thrown");
}
