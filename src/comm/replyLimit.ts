/**
 * A requester's limit in its request: an rpc whose answer may be large
 * (`get_data`, `run`, `actor_execute`, `actor_attribute`, and a client's
 * `dump_state`, `get_story`, `get_logs`, `profile_stop`) carries the
 * requesting comm's own `maxMessageBytes` and `who` asks, and the serving
 * end sends its answer with that limit (`RpcContext.limitReplyTo`). A larger
 * answer is then not sent: the requester gets an error answer with the
 * `MessageTooLargeError` naming the sizes and its limit, instead of its
 * reader closing the connection on the answer (which would fail every other
 * call on that connection, and look like a network failure). `serveRpc`
 * applies a limit so said to the answer of any op.
 */

import { showValue } from "../util/showValue.ts";
import type { Comm } from "./comm.ts";
import type { RpcContext } from "./rpc.ts";

/** The fields {@link withReplyLimit} adds to a request's arguments. */
export type ReplyLimitFields = {
  /** Who asks (a worker's address, a client's id): named in the error. */
  readonly who: string;
  /** The largest answer the requesting comm accepts; absent where it takes any size. */
  readonly maxMessageBytes?: number;
};

/**
 * `args` of a request by `who` over `comm`, with the largest answer `comm`
 * accepts (its `maxMessageBytes`, where it limits sizes: TCP, a pool
 * thread's bridged connection).
 */
export function withReplyLimit<T extends Record<string, unknown>>(
  args: T,
  who: string,
  comm: Comm,
): T & ReplyLimitFields {
  const limit = comm.maxMessageBytes;
  return limit === undefined ? { ...args, who } : { ...args, who, maxMessageBytes: limit };
}

/**
 * The serving side of {@link withReplyLimit}: if the request `args` of `op`
 * says the requester's `maxMessageBytes`, the answer is sent with it
 * (`ctx.limitReplyTo`), the limit named as `who`'s. A TypeError for a limit
 * that is not a positive integer.
 */
export function limitReplyToRequester(
  op: string,
  args: Record<string, unknown>,
  ctx: RpcContext | undefined,
): void {
  const limit = args.maxMessageBytes;
  if (limit === undefined) return;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(
      `${op}: maxMessageBytes must be a positive integer, got ${showValue(limit)}`,
    );
  }
  const who = typeof args.who === "string" ? args.who : "the requester";
  ctx?.limitReplyTo?.(limit, `the maxMessageBytes of ${who}`);
}
