/**
 * A received message whose framing and envelope could be read but a value in
 * it could not: a cloned value whose bytes do not deserialize (a value one
 * V8 serialized and another cannot read), raw bytes of a length their kind
 * does not allow. The message is lost, but not the connection's framing: a
 * reader that can answer for the one message (an rpc server, by the
 * request's id; an rpc client, by the answer's) asks to receive this error in
 * its place (`Comm.readUnreadable`) and the connection stays open. Any other
 * reader has the connection closed with it, as with any frame that does not
 * decode.
 */

import { SerializationError } from "./errors.ts";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A message arrived whole, but a value in it cannot be read: see the module's comment. */
export class UnreadableValueError extends SerializationError {
  override name = "UnreadableValueError";
  /** The message's `op`, if it had one (a request's). */
  readonly op: unknown;
  /** The message's `id`, if it had one (a request's or an answer's). */
  readonly id: unknown;

  constructor(
    /** What reading the value threw. */
    cause: Error,
    /** The message as decoded, the unreadable value left out: only its `op` and `id` are kept. */
    decoded: unknown,
  ) {
    super(`malformed frame: ${cause.message}`, { cause });
    this.op = isRecord(decoded) ? decoded.op : undefined;
    this.id = isRecord(decoded) ? decoded.id : undefined;
  }
}
