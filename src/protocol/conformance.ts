import { constants as bufferConstants } from "node:buffer";
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { jsonErrorWithPlace } from "../util/jsonErrorPlace.ts";
import { formatBytes } from "../util/parseBytes.ts";
import { AssertionError, KeyError, PyTypeError, RuntimeError } from "../util/pyErrors.ts";
import { regularFileSizeSync } from "../util/regularFile.ts";
import type { DataStore } from "../worker/state/dataStore.ts";
import { TaskError } from "../worker/state/errorMessage.ts";
import {
  InvalidTaskState,
  InvalidTransition,
  RecommendationsConflict,
  TransitionCounterMaxExceeded,
} from "../worker/state/errors.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { heapAvailable } from "./clusterDump/decode.ts";
import { instructionDiff, jsonDiff } from "./conformanceDiff.ts";
import { instructionWithSetsSorted, stateWithSetsSorted } from "./conformanceSets.ts";
import { eventFromDict } from "./daskJson/events.ts";
import { DaskDictError, type Dict, FieldReader, isDict } from "./daskJson/fields.ts";
import { instructionToDict } from "./daskJson/instructions.ts";
import { stateSnapshot } from "./daskJson/snapshot.ts";
import { recordedSizeof, recordedTypeName } from "./daskJson/values.ts";

/** One recorded step of a vector. */
export interface VectorStep {
  event: Dict;
  instructions?: Dict[];
  state?: Dict;
  raises?: string;
  configBefore?: Dict;
  dataStoreErrors?: { key: string; exceptionText: string; tracebackText: string }[];
}

/** A conformance vector (`../shared/conformance/FORMAT.md`). */
export interface Vector {
  name: string;
  config: Dict;
  orderSensitive: boolean;
  steps: VectorStep[];
}

/**
 * The heap a stimulus stream or a vector takes to read and replay, per byte of its
 * text: 35 MB of `tree.jsonl` needed a heap of 100 to 150 MB (events, the
 * WorkerState and its logs); 5 leaves a margin.
 */
export const TEXT_HEAP_PER_BYTE = 5;

/**
 * The most bytes of text {@link readMaybeGzip} reads: what the heap left can
 * replay, and at most what one string holds (512 MiB).
 */
export function textLimit(): number {
  return Math.max(
    1,
    Math.min(Math.floor(heapAvailable() / TEXT_HEAP_PER_BYTE), bufferConstants.MAX_STRING_LENGTH),
  );
}

/**
 * Read a `.json` or `.json.gz` file (or a `.jsonl.gz` stream) as text, refusing
 * more than `maxBytes` of it ({@link textLimit}) as soon as the gunzip passes it:
 * a 13 MB .jsonl.gz of 3 GB took 6 GB of memory to be called empty, and more text
 * than a string holds failed with V8's "Cannot create a string longer than
 * 0x1fffffe8 characters", and less but more than the heap, with V8 running out
 * of memory and its stack trace.
 */
export function readMaybeGzip(path: string, maxBytes = textLimit()): string {
  // A device or FIFO read forever (or until a writer came): refused from its stat.
  const size = regularFileSizeSync(path);
  // Plain text beyond the limit is refused before it is read whole.
  if (size > maxBytes && !startsWithGzipMagic(path)) {
    throw new Error(tooLargeText(`${formatBytes(size)} of text is`, maxBytes));
  }
  const buf = readFileSync(path);
  const gz = buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  let text: Buffer = buf;
  try {
    if (gz) text = gunzipSync(buf, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: unknown }).code !== "ERR_BUFFER_TOO_LARGE") throw err;
    throw new Error(tooLargeText(`${formatBytes(buf.length)} of gzip data gunzip to`, maxBytes));
  }
  if (text.length > maxBytes) {
    throw new Error(tooLargeText(`${formatBytes(text.length)} of text is`, maxBytes));
  }
  return text.toString("utf8");
}

function startsWithGzipMagic(path: string): boolean {
  const head = Buffer.alloc(2);
  const fd = openSync(path, "r");
  try {
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

function tooLargeText(what: string, maxBytes: number): string {
  const why =
    maxBytes === bufferConstants.MAX_STRING_LENGTH
      ? "one string holds: cut it (a stream cut after any line replays)"
      : "this process has the heap to replay; give node more (NODE_OPTIONS=--max-old-space-size=MB)";
  return `too large to read here: ${what} more than the ${formatBytes(maxBytes)} ${why}`;
}

/**
 * Why a vector of no steps is refused where it would be replayed: it would pass
 * having checked nothing.
 */
export const NO_STEPS_PROBLEM = "the vector has no steps: nothing to replay or check";

/**
 * Parse and check the shape of a vector. Errors say `WHERE: PATH: problem`, the
 * file once and then the field inside it (`steps[0].event: expected an object`).
 */
export function parseVector(text: string, where: string): Vector {
  let d: unknown;
  try {
    d = JSON.parse(text);
  } catch (err) {
    throw new DaskDictError(`${where}: not valid JSON (${jsonErrorWithPlace(text, err)})`);
  }
  if (!isDict(d)) throw new DaskDictError(`${where}: expected a JSON object`);
  try {
    return vectorOf(d, where);
  } catch (err) {
    if (!(err instanceof DaskDictError)) throw err;
    // The top-level reader is named "" so that paths start at the field: drop its dot.
    throw new DaskDictError(`${where}: ${err.message.replace(/^\./, "")}`, { cause: err });
  }
}

/** The vector in `d`; errors name the path inside the vector only. */
function vectorOf(d: Dict, where: string): Vector {
  const r = new FieldReader(d, "");
  const stepsRaw: unknown = r.raw("steps");
  if (!Array.isArray(stepsRaw)) r.fail("steps", "a list", stepsRaw);
  const steps = (stepsRaw as unknown[]).map((s, i): VectorStep => {
    if (!isDict(s)) throw new DaskDictError(`steps[${i}]: expected an object`);
    const sr = new FieldReader(s, `steps[${i}]`);
    const step: VectorStep = { event: sr.dict("event") };
    if (sr.has("raises")) step.raises = sr.str("raises");
    else {
      const instr = sr.raw("instructions");
      if (!Array.isArray(instr) || !instr.every(isDict))
        sr.fail("instructions", "a list of objects", instr);
      step.instructions = instr as Dict[];
      step.state = sr.dict("state");
    }
    if (sr.has("config_before")) step.configBefore = sr.dict("config_before");
    if (sr.has("data_store_errors")) {
      const errs: unknown = sr.raw("data_store_errors");
      if (!Array.isArray(errs)) sr.fail("data_store_errors", "a list", errs);
      step.dataStoreErrors = (errs as unknown[]).map((e, j) => {
        if (!isDict(e))
          throw new DaskDictError(`steps[${i}].data_store_errors[${j}]: expected an object`);
        const er = new FieldReader(e, `steps[${i}].data_store_errors[${j}]`);
        return {
          key: er.str("key"),
          exceptionText: er.str("exception_text"),
          tracebackText: er.str("traceback_text"),
        };
      });
    }
    return step;
  });
  if (d.order_sensitive !== undefined && typeof d.order_sensitive !== "boolean") {
    throw new TypeError(
      `${where}: order_sensitive must be true or false, got ${JSON.stringify(d.order_sensitive)}`,
    );
  }
  return {
    name: typeof d.name === "string" ? d.name : where,
    config: r.dict("config"),
    orderSensitive: d.order_sensitive === true,
    steps,
  };
}

/** A Map data store that fails for chosen keys, as a recording's spilling store did. */
export class FailingDataStore extends Map<string, unknown> {
  failures = new Map<string, TaskError>();
  override set(key: string, value: unknown): this {
    const err = this.failures.get(key);
    if (err !== undefined) throw err;
    return super.set(key, value);
  }
}

/** Attributes a vector may set on the state machine (FORMAT.md `config`, `config_before`). */
export function applyConfig(ws: WorkerState, config: Dict, where: string): void {
  const r = new FieldReader(config, where);
  for (const name of Object.keys(config)) {
    switch (name) {
      case "nthreads":
        ws.nthreads = r.int(name);
        break;
      case "address":
        ws.address = r.str(name);
        break;
      case "transfer_incoming_count_limit":
        ws.transferIncomingCountLimit = r.numOrInf(name);
        break;
      case "transfer_incoming_bytes_limit":
        ws.transferIncomingBytesLimit = r.numOrInf(name);
        break;
      case "transfer_message_bytes_limit":
        ws.transferMessageBytesLimit = r.numOrInf(name);
        break;
      case "transfer_incoming_bytes_throttle_threshold":
        ws.transferIncomingBytesThrottleThreshold = r.numOrInf(name);
        break;
      case "validate":
        ws.validate = r.bool(name);
        break;
      case "transition_counter_max": {
        const v = r.raw(name);
        if (v === false || v === null) ws.transitionCounterMax = false;
        else ws.transitionCounterMax = r.num(name);
        break;
      }
      case "available_resources":
        ws.availableResources.clear();
        for (const [k, v] of r.numMap(name)) ws.availableResources.set(k, v);
        break;
      case "running":
        ws.running = r.bool(name);
        break;
      case "generation":
        ws.generation = r.int(name);
        break;
      // Counters a test may have set directly (the seed's attributes of the same names).
      case "transfer_incoming_bytes":
        ws.transferIncomingBytes = r.num(name);
        break;
      case "transfer_incoming_count_total":
        ws.transferIncomingCountTotal = r.int(name);
        break;
      case "executed_count":
        ws.executedCount = r.int(name);
        break;
      case "transition_counter":
        ws.transitionCounter = r.int(name);
        break;
      case "total_resources":
        ws.totalResources.clear();
        for (const [k, v] of r.numMap(name)) ws.totalResources.set(k, v);
        break;
      case "resources": // set at construction (the seed's WorkerState has no such attribute)
      case "data_type": // informational: the recording's data store
        break;
      default:
        // Ignoring it could pass a vector whose recording depended on it.
        throw new DaskDictError(
          `${where}.${name}: not an attribute the conformance format sets (FORMAT.md, config)`,
        );
    }
  }
}

/**
 * Build the state machine a vector's config describes. `clock` is the wall clock its
 * logs read (default: always 0, as the recordings were made).
 */
export function workerStateFromConfig(
  config: Dict,
  where: string,
  data: DataStore = new FailingDataStore(),
  clock?: () => number,
): WorkerState {
  const r = new FieldReader(config, where);
  const ws = new WorkerState({
    clock,
    nthreads: r.has("nthreads") ? r.int("nthreads") : 1,
    address: r.has("address") ? r.str("address") : undefined,
    resources: r.has("resources") ? r.numMap("resources") : undefined,
    validate: r.has("validate") ? r.bool("validate") : true,
    data,
    sizeof: recordedSizeof,
    typeName: recordedTypeName,
  });
  applyConfig(ws, config, where);
  return ws;
}

/** Where and how a replay first diverged from the recording. */
export interface Mismatch {
  step: number;
  event: Dict;
  what: "instructions" | "state" | "raises" | "error";
  details: string[];
}

/** The port's error for each exception class a recording may name (FORMAT.md, raises). */
const PORT_ERRORS: Readonly<Record<string, abstract new (...args: never[]) => Error>> = {
  InvalidTransition,
  InvalidTaskState,
  TransitionCounterMaxExceeded,
  RecommendationsConflict,
  AssertionError,
  RuntimeError,
  KeyError,
  TypeError: PyTypeError,
};

/**
 * Whether the port raised what the reference did: an error of that name, and of the
 * port's class for it, so that a JavaScript TypeError from a bug in the port does not
 * pass for the reference's TypeError.
 */
function raisesAsRecorded(err: unknown, raises: string): boolean {
  if (!(err instanceof Error) || err.name !== raises) return false;
  const cls = Object.hasOwn(PORT_ERRORS, raises) ? PORT_ERRORS[raises] : undefined;
  return cls === undefined || err instanceof cls;
}

/** The event of step `i`; a codec error names the step (`steps[6].event: …`). */
function stepEvent(step: VectorStep, i: number): StateMachineEvent {
  try {
    return eventFromDict(step.event);
  } catch (err) {
    if (!(err instanceof DaskDictError)) throw err;
    // The codec names the event itself "event" at the top: say it once.
    const message = err.message.replace(/^event: /, "");
    throw new DaskDictError(`steps[${i}].event: ${message}`, { cause: err });
  }
}

/** Options of {@link replayVector}. */
export interface ReplayVectorOptions {
  /** Called before each step's stimulus is handled, with the state machine as it is then. */
  readonly beforeStep?: (ws: WorkerState, event: StateMachineEvent, step: number) => void;
  /**
   * False: only replay (stimuli, configuration changes and store failures), comparing
   * nothing; an error the step does not expect still ends the replay. Default true.
   */
  readonly compare?: boolean;
}

/** Replay a vector; returns null when every step matches, else the first divergence. */
export function replayVector(v: Vector, options: ReplayVectorOptions = {}): Mismatch | null {
  const data = new FailingDataStore();
  const ws = workerStateFromConfig(v.config, "config", data);
  for (let i = 0; i < v.steps.length; i++) {
    const step = v.steps[i];
    if (step.configBefore) applyConfig(ws, step.configBefore, `steps[${i}].config_before`);
    data.failures.clear();
    for (const e of step.dataStoreErrors ?? []) {
      data.failures.set(e.key, new TaskError(e.exceptionText, e.tracebackText));
    }
    const event = stepEvent(step, i);
    options.beforeStep?.(ws, event, i);
    let instructions: Dict[];
    try {
      instructions = ws.handleStimulus(event).map(instructionToDict);
    } catch (err) {
      const name = err instanceof Error ? err.name : typeof err;
      if (step.raises !== undefined && raisesAsRecorded(err, step.raises)) continue;
      const got =
        name === step.raises
          ? `a ${name} not of the port's own class (a JavaScript error: a bug)`
          : name;
      return {
        step: i,
        event: step.event,
        what: step.raises !== undefined ? "raises" : "error",
        details: [
          step.raises !== undefined ? `expected ${step.raises}, got ${got}` : `unexpected ${name}`,
          ...String(err instanceof Error ? err.message : err)
            .split("\n")
            .slice(0, 12),
        ],
      };
    }
    if (options.compare === false) continue;
    if (step.raises !== undefined) {
      return {
        step: i,
        event: step.event,
        what: "raises",
        details: [`expected ${step.raises}, nothing was raised`],
      };
    }
    const expected = (step.instructions ?? []).map(instructionWithSetsSorted);
    const diff = instructionDiff(expected, instructions);
    if (diff.length > 0) return { step: i, event: step.event, what: "instructions", details: diff };
    const state = step.state === undefined ? undefined : stateWithSetsSorted(step.state);
    const stateDiff = jsonDiff(state, stateSnapshot(ws));
    if (stateDiff.length > 0)
      return { step: i, event: step.event, what: "state", details: stateDiff };
  }
  return null;
}
