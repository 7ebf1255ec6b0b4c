import { inspect } from "node:util";

/**
 * What the state machine keeps of an error: the error itself (opaque), its
 * traceback and their texts, as Dask's `distributed.core.error_message` gives them.
 */
export interface ErrorMessage {
  /** Always `"error"`, as in the seed's error message dicts. */
  status: "error";
  /** The thrown value itself (the seed's serialised exception); opaque to the state machine. */
  exception: unknown;
  /** The traceback (the stack, for an Error), or null when there is none. */
  traceback: unknown;
  /** The error as text (`Name: message` for an Error), the seed's `exception_text`. */
  exceptionText: string;
  /**
   * The traceback as text (the stack without its first line), the seed's `traceback_text`; may be
   * empty.
   */
  tracebackText: string;
}

/**
 * An error that carries its own texts. Thrown by a data store or a task when the
 * texts must come out exactly as given (a replayed recording, an error that crossed
 * a process boundary).
 */
export class TaskError extends Error {
  override name = "TaskError";
  constructor(
    /**
     * The error's text as the seed's `exception_text` has it (`Name: message`), kept exactly as
     * given.
     */
    readonly exceptionText: string,
    /** The traceback's text (the seed's `traceback_text`), kept exactly as given; may be empty. */
    readonly tracebackText: string,
  ) {
    super(exceptionText);
  }
}

function hasTexts(err: unknown): err is { exceptionText: string; tracebackText: string } {
  return (
    typeof err === "object" &&
    err !== null &&
    typeof (err as { exceptionText?: unknown }).exceptionText === "string" &&
    typeof (err as { tracebackText?: unknown }).tracebackText === "string"
  );
}

/** The default conversion of a thrown value into an {@link ErrorMessage}. */
export function errorMessage(err: unknown): ErrorMessage {
  if (hasTexts(err)) {
    return {
      status: "error",
      exception: err,
      traceback: null,
      exceptionText: err.exceptionText,
      tracebackText: err.tracebackText,
    };
  }
  if (err instanceof Error) {
    // Code may set `stack` to anything; only a string is a traceback.
    const stack = typeof err.stack === "string" ? err.stack : "";
    const newline = stack.indexOf("\n");
    return {
      status: "error",
      exception: err,
      traceback: stack,
      exceptionText: `${err.name}: ${err.message}`,
      tracebackText: newline >= 0 ? stack.slice(newline + 1) : "",
    };
  }
  return {
    status: "error",
    exception: err,
    traceback: null,
    exceptionText: describeThrown(err),
    tracebackText: "",
  };
}

/**
 * The text of a thrown value that is not an Error (`throw "boom"`, `throw {code: 3}`):
 * a string as it is, anything else as Node prints it (`{ code: 3 }`, not `[object Object]`).
 */
function describeThrown(err: unknown): string {
  if (typeof err === "string") return err;
  return inspect(err, { depth: 2, breakLength: Number.POSITIVE_INFINITY, maxStringLength: 1000 });
}
