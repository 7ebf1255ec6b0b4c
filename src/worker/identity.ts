/**
 * A worker's `identity` rpc, as Dask's `Worker.identity`: what it is, whose
 * scheduler, its threads and memory limit, and (weft's) the largest message
 * it reads. The connections to a peer (`PeerPool`) ask it first, so that a
 * request larger than the peer reads fails at the sender, saying so, instead
 * of the peer closing the connection on it (a network failure to the sender).
 */

import { showValue } from "../util/showValue.ts";

/** The answer to `identity`. */
export interface WorkerIdentity {
  readonly type: "Worker";
  /** The worker's address. */
  readonly id: string;
  readonly name: string | null;
  readonly scheduler: string;
  readonly nthreads: number;
  /** In bytes; null: none. */
  readonly memoryLimit: number | null;
  /** The largest message the worker reads. */
  readonly maxMessageBytes: number;
}

/**
 * The `maxMessageBytes` of an `identity` answer; undefined where it says none
 * (a peer that does not say one). A TypeError for one that is not a positive integer.
 */
export function maxMessageBytesOf(answer: unknown): number | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const limit = (answer as { maxMessageBytes?: unknown }).maxMessageBytes;
  if (limit === undefined) return undefined;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(
      `identity: maxMessageBytes must be a positive integer, got ${showValue(limit)}`,
    );
  }
  return limit;
}
