import { canonical, parseVector, readMaybeGzip, replayVector } from "../protocol/conformance.ts";
import { toInputError } from "./errors.ts";
import type { VectorReplayReport } from "./report.ts";

/**
 * Replays a conformance vector (`../shared/conformance/FORMAT.md`) as the conformance
 * runner does: every step's instructions and state must match the recording. An
 * order-sensitive vector is reported as skipped. Throws ReplayInputError when the
 * file cannot be read or is not a vector.
 */
export function replayVectorFile(file: string): VectorReplayReport {
  let vector: ReturnType<typeof parseVector>;
  try {
    vector = parseVector(readMaybeGzip(file), file);
  } catch (err) {
    throw toInputError(file, err);
  }
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
