import {
  NO_STEPS_PROBLEM,
  parseVector,
  readMaybeGzip,
  replayVector,
  type Vector,
} from "../protocol/conformance.ts";
import { canonical } from "../protocol/conformanceDiff.ts";
import { ReplayInputError, toInputError } from "./errors.ts";
import { isDumpObject, jsonDumpAdvice } from "./jsonDump.ts";
import type { VectorReplayReport } from "./report.ts";

/**
 * Replays a conformance vector (`../shared/conformance/FORMAT.md`) as the conformance
 * runner does: every step's instructions and state must match the recording. An
 * order-sensitive vector is reported as skipped. Throws ReplayInputError when the
 * file cannot be read, is not a vector, or has no step.
 */
export function replayVectorFile(file: string): VectorReplayReport {
  const vector = readVectorFile(file);
  let transitionCounter: number | null = null;
  for (const step of vector.steps) {
    const c = step.state?.transition_counter;
    if (typeof c === "number") transitionCounter = c;
  }
  const base = { kind: "vector" as const, file, name: vector.name, steps: vector.steps.length };
  if (vector.orderSensitive) {
    return { ...base, skipped: true, transitionCounter, mismatch: null, ok: true };
  }
  let mismatch: VectorReplayReport["mismatch"];
  try {
    const m = replayVector(vector);
    mismatch =
      m === null
        ? null
        : { step: m.step, what: m.what, event: canonical(m.event), details: m.details };
  } catch (err) {
    // A step whose event the codec rejects: the vector is broken, not the port.
    throw toInputError(file, err);
  }
  return { ...base, skipped: false, transitionCounter, mismatch, ok: mismatch === null };
}

/**
 * The conformance vector in `file`. Throws ReplayInputError when the file cannot
 * be read, is not a vector (saying what it is, when it is a stream or a dump) or
 * has no step.
 */
export function readVectorFile(file: string): Vector {
  let vector: Vector;
  let text: string | null = null;
  try {
    text = readMaybeGzip(file);
    vector = parseVector(text, file);
  } catch (err) {
    const notVector = text === null ? null : whyNotAVector(text, file);
    throw notVector === null ? toInputError(file, err) : new ReplayInputError(file, notVector);
  }
  // As an empty stream or a dump without workers: it would pass having checked nothing.
  if (vector.steps.length === 0) {
    throw new ReplayInputError(file, NO_STEPS_PROBLEM);
  }
  return vector;
}

/**
 * Why `text`, read from `file`, a name of a vector's, is no vector: a stimulus
 * stream or a cluster dump (with the name to give it), or JSON that is no input of
 * weft replay at all (no object, or one without "steps": a graph file, say). Null
 * when it looks like a vector or is no JSON of a kind known here: then the field
 * that is wrong says more than what the file is not. A `.gz` of the `file`'s name
 * is kept in the name it is told to take (a gzipped file renamed `.yaml` or
 * `.jsonl` is no YAML or JSON lines). The conformance runner says the same.
 */
export function whyNotAVector(text: string, file: string): string | null {
  const gz = file.endsWith(".gz") ? ".gz" : "";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return streamNamedJson(text, gz);
  }
  const object = typeof data === "object" && data !== null && !Array.isArray(data);
  if (object && Object.hasOwn(data as object, "steps")) return null;
  if (isDumpObject(data)) return jsonDumpAdvice(file);
  const what = object ? 'a JSON object without "steps"' : `JSON, but ${describeJson(data)}`;
  return `not a conformance vector, cluster dump or stimulus stream (${what})`;
}

/**
 * What a text that is not JSON says when it is a stimulus stream (JSON lines,
 * the first a header with a "config" and no "steps") named `.json`: its lines
 * read as one document failed at the second, "Unexpected non-whitespace
 * character after JSON at position 388", which named neither the kind nor the fix.
 */
function streamNamedJson(text: string, gz: string): string | null {
  const end = text.indexOf("\n");
  const firstLine = end === -1 ? text : text.slice(0, end);
  let header: unknown;
  try {
    header = JSON.parse(firstLine);
  } catch {
    return null;
  }
  const isHeader =
    typeof header === "object" &&
    header !== null &&
    Object.hasOwn(header, "config") &&
    !Object.hasOwn(header, "steps");
  return isHeader
    ? `a stimulus stream (JSON lines, the first a header with a config), not a conformance vector: name it .jsonl${gz}`
    : null;
}

function describeJson(data: unknown): string {
  if (Array.isArray(data)) return "an array";
  if (data === null) return "null";
  return `a ${typeof data}`;
}
