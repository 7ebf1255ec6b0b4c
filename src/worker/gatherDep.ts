/**
 * Fetching a task's inputs from a peer (the `GatherDep` instruction): `get_data`
 * on the peer's connection, and what the answer, or the failure, means to the
 * state machine: `GatherDepSuccessEvent` with the values, `GatherDepBusyEvent`
 * (the peer serves too many already: ask again later),
 * `GatherDepNetworkFailureEvent` (the peer is unreachable: fetch from another
 * holder) or `GatherDepFailureEvent` (anything else).
 *
 * Apart from the worker because it is the client side of `dataServer.ts`,
 * with its own reading of the answer and of the errors.
 */

import type { Logger } from "pino";
import { isNetworkError } from "../comm/errors.ts";
import { newStimulusId as stimulusId } from "../util/stimulusId.ts";
import type { AsyncInstructionContext } from "./baseWorker.ts";
import { getDataArgs, parseGetDataResponse } from "./dataServer.ts";
import { wireErrorMessage } from "./executor.ts";
import { getDataParts } from "./getDataParts.ts";
import type { PeerPool } from "./peerPool.ts";
import { raceSignal } from "./raceSignal.ts";
import {
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  type StateMachineEvent,
} from "./state/events.ts";
import type { StartStop, TaskState } from "./state/taskState.ts";

/** What fetching from peers needs of the worker. */
export interface GatherHost {
  readonly peers: PeerPool;
  readonly logger: Logger;
  /** The worker's address (the `who` of `get_data`). */
  address(): string;
  /** Monotonic seconds, for the time spent on the network. */
  now(): number;
  /** Wall-clock seconds since the epoch, for the task stream's `transfer` records. */
  wallNow(): number;
  /**
   * The keys `keys` came from `ss.source` over `ss` (a `transfer`): recorded on
   * the task the fetch was for, as Dask's `gather_dep` does, for the task stream.
   */
  transferred(keys: ReadonlySet<string>, ss: StartStop): void;
  /** The expected size of a key's value (the state machine's estimate), to split a fetch of many keys. */
  nbytesOf(key: string): number;
}

/** Fetch the keys `toGather` from the peer `worker`: the event saying how it went. Rethrows an abort. */
export async function gatherFromPeer(
  host: GatherHost,
  worker: string,
  toGather: ReadonlySet<string>,
  totalNbytes: number,
  ctx: AsyncInstructionContext,
): Promise<StateMachineEvent> {
  const start = host.now();
  const wallStart = host.wallNow();
  try {
    const client = await host.peers.get(worker, ctx.signal);
    const data = new Map<string, unknown>();
    // One part almost always; more where many long keys would make a message too
    // large. The answer must fit this worker's limit and the request the peer's
    // (the request names every key the answer does).
    const limit = lowest(client.comm.maxMessageBytes, host.peers.limitOf(worker));
    for (const part of getDataParts(toGather, host.nbytesOf, limit)) {
      const response = await raceSignal(
        client.call("get_data", getDataArgs(part, host.address(), client.comm, true), {
          signal: ctx.signal,
        }),
        ctx.signal,
      );
      const parsed = parseGetDataResponse(response, new Set(part), worker);
      // Busy for a later part: the earlier parts' values are dropped and all asked for again.
      if (parsed.status === "busy") {
        ctx.ledger.record("network", host.now() - start);
        return new GatherDepBusyEvent({
          worker,
          totalNbytes,
          stimulusId: stimulusId("gather-dep-busy"),
        });
      }
      for (const [key, value] of parsed.data) data.set(key, value);
    }
    ctx.ledger.record("network", host.now() - start);
    host.transferred(toGather, {
      action: "transfer",
      start: wallStart,
      stop: host.wallNow(),
      source: worker,
    });
    return new GatherDepSuccessEvent({
      worker,
      totalNbytes,
      data,
      stimulusId: stimulusId("gather-dep-success"),
    });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (isNetworkError(err)) {
      host.logger.warn({ err, peer: worker }, "network failure while gathering data from a peer");
      return new GatherDepNetworkFailureEvent({
        worker,
        totalNbytes,
        stimulusId: stimulusId("gather-dep-network-failure"),
      });
    }
    host.logger.error({ err, peer: worker }, "failed to gather data from a peer");
    return GatherDepFailureEvent.fromException(
      err,
      { worker, totalNbytes, stimulusId: stimulusId("gather-dep-failure") },
      wireErrorMessage,
    );
  }
}

/**
 * The task a fetch of `keys` is recorded on (Dask's `Worker._get_cause`): a
 * dependent of the first key that has one, the one likely to run next, else
 * the last key itself (fetched for `acquire-replicas`, nothing here needs it).
 * Undefined if none of the keys is known any more.
 */
export function transferCause(
  state: { readonly tasks: ReadonlyMap<string, TaskState> },
  keys: Iterable<string>,
): TaskState | undefined {
  let cause: TaskState | undefined;
  for (const key of keys) {
    const ts = state.tasks.get(key);
    if (ts === undefined) continue;
    for (const dependent of ts.dependents) return dependent;
    cause = ts;
  }
  return cause;
}

function lowest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}
