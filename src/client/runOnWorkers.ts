/**
 * `Client.run` (Dask's): a task function run on workers outside any graph,
 * each worker answering for itself (its `run` rpc).
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { withReplyLimit } from "../comm/replyLimit.ts";
import { RemoteError, remoteMessage } from "../comm/rpc.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { askEachWorker } from "./askWorkers.ts";
import { RunError } from "./errors.ts";

/** Options of `Client.runWith`. */
export interface RunOptions {
  /**
   * Only these workers (addresses, hosts for every worker there, or names); an
   * entry no connected worker matches fails as a worker that cannot be reached.
   * Default (or null): every worker.
   */
  readonly workers?: string | readonly string[] | null;
  /**
   * `"raise"` (default): reject with the `RunError` of the first worker (by address)
   * that failed; `"return"`: resolve with the `RunError` as that worker's value.
   */
  readonly onError?: "raise" | "return";
}

/**
 * The answer of one worker's `run` asked by `who` (the client's id): its
 * value, or why it failed. The request says the connection's limit, so that a
 * value larger than this end accepts is refused by the worker (an error answer,
 * this run's alone) instead of sent for this end to close the connection on it.
 */
async function runOn(
  peers: PeerPool,
  address: string,
  who: string,
  fn: string,
  args: readonly unknown[],
): Promise<unknown> {
  let response: unknown;
  try {
    const rpc = await peers.get(address);
    response = await rpc.call(
      "run",
      withReplyLimit({ fn, args: args.map((a) => new ClonedValue(a)) }, who, rpc.comm),
    );
  } catch (err) {
    // The worker's error answer: its text without the rpc's "run on <address> failed: ".
    const why =
      err instanceof RemoteError
        ? `${err.remoteName}: ${remoteMessage(err)}`
        : err instanceof Error
          ? err.message
          : String(err);
    return new RunError(address, why, "", { cause: err });
  }
  return runAnswer(address, response, "run");
}

/**
 * What a `run` (or `run-on-scheduler`) answer from `address` gives: the
 * function's value (`{status: "OK", value}`), or a {@link RunError} carrying
 * what it threw (`{status: "error", error}`) or saying the answer is malformed.
 */
export function runAnswer(address: string, response: unknown, op: string): unknown {
  const r = response as { status?: unknown; value?: unknown; error?: unknown } | null;
  if (r?.status === "OK") return ClonedValue.unwrap(r.value);
  const e = r?.error as { exceptionText?: unknown; tracebackText?: unknown } | undefined;
  if (r?.status === "error" && typeof e?.exceptionText === "string") {
    return new RunError(
      address,
      e.exceptionText,
      typeof e.tracebackText === "string" ? e.tracebackText : "",
    );
  }
  return new RunError(address, `malformed answer to ${op}: ${String(JSON.stringify(response))}`);
}

/**
 * `fn(...args)` on each of `addresses`, asked by `who` (the client's id), at once: `{address: value}` in address
 * order. A failure rejects with the first `RunError` (by address), or with
 * `onError: "return"` is that worker's value.
 */
export function runOnWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  who: string,
  fn: string,
  args: readonly unknown[],
  onError: "raise" | "return",
): Promise<Record<string, unknown>> {
  return askEachWorker(
    addresses,
    (a) => runOn(peers, a, who, fn, args),
    (v) => (v instanceof RunError && onError === "raise" ? v : null),
  );
}
