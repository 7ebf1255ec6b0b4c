import { inspect } from "node:util";
import { cutEnd } from "../../util/cutText.ts";

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

/**
 * How many characters of an error's message, stack and texts travel and are kept: the
 * default of Dask's `distributed.admin.max-error-length`. An error carrying megabytes
 * (a task that put its input into its message) would otherwise be sent to the
 * scheduler, kept for every dependent that failed with it, and printed whole by
 * the client, several times over (the message is in the stack and the text too).
 */
export const MAX_ERROR_LENGTH = 10_000;

/**
 * `text` cut to `max` characters, saying how many were cut. A surrogate pair is
 * never split (its half would turn into U+FFFD on the wire).
 */
export function truncateErrorText(text: string, max: number = MAX_ERROR_LENGTH): string {
  if (text.length <= max) return text;
  const end = cutEnd(text, max);
  return `${text.slice(0, end)}… [${text.length - end} more characters cut]`;
}

/**
 * The first line(s) of an Error's V8 stack: `Name: message`, or `Name` alone for
 * an empty message. A message of several lines spans as many lines of the stack,
 * so the frames start after this, not after the first newline.
 */
export function stackHeader(name: string, message: string): string {
  return message === "" ? name : `${name}: ${message}`;
}

/** The frames of `stack` (an Error's), below its header. */
export function stackFrames(stack: string, name: string, message: string): string {
  const header = stackHeader(name, message);
  if (stack.startsWith(header) && stack.charAt(header.length) === "\n") {
    return stack.slice(header.length + 1);
  }
  const newline = stack.indexOf("\n");
  return newline >= 0 ? stack.slice(newline + 1) : "";
}

/**
 * The default conversion of a thrown value into an {@link ErrorMessage}. Texts
 * longer than {@link MAX_ERROR_LENGTH} are cut, as Dask's `error_message` cuts
 * them; an error that carries its own texts ({@link TaskError}) keeps them whole.
 */
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
    const name = String(err.name);
    const message = String(err.message);
    return {
      status: "error",
      exception: err,
      traceback: stack,
      // `Error` alone for an empty message, as Python's format_exception_only
      // gives `ValueError` for `ValueError()`, not `ValueError: `.
      exceptionText: truncateErrorText(stackHeader(name, message)),
      tracebackText: truncateErrorText(stackFrames(stack, name, message)),
    };
  }
  return {
    status: "error",
    exception: err,
    traceback: null,
    exceptionText: truncateErrorText(describeThrown(err)),
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
