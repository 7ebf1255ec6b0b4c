/**
 * What the scheduler sends a worker in place of a message of keys it cannot
 * send it (larger than the worker's `maxMessageBytes`, which it said when it
 * registered, or than the scheduler's own): the same message in two halves,
 * each of half the keys, which may fit where the whole did not. Nothing then
 * waits for good on a message that was dropped: a `replicate` for the copies
 * of `acquire-replicas`, the worker's memory for a `free-keys`. A message of
 * one key, or one that cannot be encoded, stays dropped (as the stream logs
 * it); a `compute-task` fails its task instead (`workerSession.ts`).
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { keysInHalves } from "../protocol/keysInHalves.ts";
import type {
  AcquireReplicasMsg,
  FreeKeysMsg,
  RefreshWhoHasMsg,
  RemoveReplicasMsg,
} from "../protocol/messagesWorker.ts";

/** `msg` in two halves, for `err`; empty when it is not a message of keys that splits. */
export function workerMessageHalves(msg: unknown, err: unknown): object[] {
  if (!(err instanceof MessageTooLargeError) || typeof msg !== "object" || msg === null) return [];
  const op = (msg as { op?: unknown }).op;
  if (op === "free-keys" || op === "remove-replicas") {
    return keysInHalves(msg as FreeKeysMsg | RemoveReplicasMsg);
  }
  if (op === "acquire-replicas" || op === "refresh-who-has") {
    const m = msg as AcquireReplicasMsg | RefreshWhoHasMsg;
    if (!(m.whoHas instanceof Map) || m.whoHas.size < 2) return [];
    const entries = [...m.whoHas];
    const half = Math.ceil(entries.length / 2);
    return [entries.slice(0, half), entries.slice(half)].map((part) => {
      const whoHas = new Map(part);
      if (m.op === "refresh-who-has") return { ...m, whoHas };
      const nbytes = new Map([...m.nbytes].filter(([key]) => whoHas.has(key)));
      return { ...m, whoHas, nbytes };
    });
  }
  return [];
}
