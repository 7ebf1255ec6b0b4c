/** How a simulated run fails. */

/** The kinds of failure the simulator reports. */
export type FailureKind =
  /** The event queue ran dry, or nothing progressed for `stallTimeout`, while work remained. */
  | "deadlock"
  /** Too many events: the cluster keeps busy without finishing. */
  | "livelock"
  /** A state machine threw (invalid transition, invalid state, …). */
  | "raised"
  /** `validateState()` of a machine failed after a stimulus. */
  | "invalid-state"
  /** A wanted key ended with the wrong value. */
  | "wrong-value"
  /** A wanted key was lost, erred without an injected cause, or was cancelled. */
  | "lost"
  /** After the client released everything, a machine still held tasks or data. */
  | "leak";

/** A failure found in a run; thrown inside the run and caught by its loop. */
export class SimFailure extends Error {
  constructor(
    /** What kind of failure it is. */
    readonly kind: FailureKind,
    message: string,
    /** Longer diagnostics: stories of the keys involved. */
    readonly details = "",
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "SimFailure";
  }
}

/** What a machine threw, as a failure's message says it: `Name: message`. */
export function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
