/**
 * The worker's `get_data` handler: peers (and clients) ask for keys, the worker
 * answers with the values it holds. At most `transferOutgoingCountLimit`
 * answers are in flight at once (twice that for peers on the same host, one
 * while paused for memory, as in Dask); beyond that it answers `{status: "busy"}` and the
 * peer retries later. A key whose spilled value is gone from disk is left out
 * of the answer, as a key the worker no longer holds, named as `lost`, and the
 * worker told.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import type { Comm } from "../comm/comm.ts";
import { type ReplyLimitFields, withReplyLimit } from "../comm/replyLimit.ts";
import type { RpcContext } from "../comm/rpc.ts";
import { actorRef } from "../protocol/actors.ts";
import { addressHostOrNull } from "../util/address.ts";
import { showValue } from "../util/showValue.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import type { WorkerState } from "./state/workerState.ts";

/**
 * The answer to `get_data` (on the wire, values other than scalars are
 * {@link ClonedValue}s). `lost`, when there are any, names the keys asked whose
 * spilled value this worker found gone from disk: left out of `data`, as keys
 * it does not hold, yet claimed until it drops them (see lostSpills.ts), after
 * which the scheduler computes them again. A client waits for that rather than
 * giving such a key up as lost.
 */
export type GetDataResponse =
  | {
      readonly status: "OK";
      readonly data: Map<string, unknown>;
      readonly lost?: readonly string[];
    }
  | { readonly status: "busy" };

/** What the data server needs to know of its worker. */
export interface DataServerHost {
  /** The worker's state machine: what it holds, and how busy it is. */
  readonly state: WorkerState;
  /**
   * True while the worker's memory monitor holds it paused. A worker the
   * scheduler pauses to retire it serves at the full rate, as Dask's
   * (`closing_gracefully`) does: its data is on its way out.
   */
  readonly isPausedForMemory: boolean;
  /**
   * Told of a value found lost from disk (a worker whose store spills drops
   * it: see lostSpills.ts). The requester gets the other keys: it asks the
   * scheduler where this one is now, as it does for any key a worker no longer holds.
   */
  valueLost?(err: SpilledValueLostError): void;
  /**
   * Whether a peer (another worker) fetching a value found lost is to get the
   * error rather than an answer without it: the tasks there needing it then err
   * (see `LostSpills.failsPeer`). Asked only once {@link valueLost} was told.
   */
  failsPeer?(err: SpilledValueLostError): boolean;
}

/**
 * `v` as a `get_data` answer (or a client's `update_data`) carries it: a {@link ClonedValue}, except for
 * numbers, booleans, null, undefined and bigints, which the wire's own
 * encoding keeps exactly and faster (strings are cloned: msgpack's UTF-8
 * would change a lone surrogate).
 */
export function asWireValue(v: unknown): unknown {
  const t = typeof v;
  return t === "number" || t === "boolean" || t === "bigint" || v == null ? v : new ClonedValue(v);
}

/** Serves `get_data` with outgoing-transfer throttling. */
export class DataServer {
  /** Answers being sent now. */
  outgoingCount = 0;
  /** Answers sent since the start. */
  outgoingCountTotal = 0;
  /** Bytes of the answers being sent now (from the tasks' nbytes). */
  outgoingBytes = 0;
  /** Bytes sent since the start. */
  outgoingBytesTotal = 0;
  /** `busy` answers since the start. */
  busyCountTotal = 0;

  constructor(
    private readonly worker: DataServerHost,
    /** Dask's `transfer_outgoing_count_limit`. */
    readonly outgoingCountLimit: number,
  ) {}

  /**
   * The `get_data` rpc handler: `{keys: string[], who?, peer?, maxMessageBytes?}` →
   * {@link GetDataResponse}. An answer larger than the requester's
   * `maxMessageBytes` is not sent: the requester gets an error answer with
   * the `MessageTooLargeError` (see {@link getDataArgs}).
   */
  readonly getData = (args: Record<string, unknown>, ctx: RpcContext): GetDataResponse => {
    const keys = args.keys;
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
      throw new TypeError("get_data: keys must be an array of strings");
    }
    if (args.peer !== undefined && typeof args.peer !== "boolean") {
      throw new TypeError(`get_data: peer must be a boolean, got ${showValue(args.peer)}`);
    }
    const state = this.worker.state;
    let max = this.outgoingCountLimit;
    const peerHost = addressHostOrNull(ctx.comm.peerAddress);
    if (peerHost !== null && peerHost === addressHostOrNull(state.address)) max *= 2;
    if (this.worker.isPausedForMemory) max = 1;
    if (this.outgoingCount >= max) {
      this.busyCountTotal++;
      return { status: "busy" };
    }
    const data = new Map<string, unknown>();
    const lost: string[] = [];
    const failing: SpilledValueLostError[] = [];
    const peer = args.peer ?? looksLikeWorkerAddress(args.who);
    let bytes = 0;
    for (const key of keys as string[]) {
      if (state.data.has(key)) {
        let value: unknown;
        try {
          value = state.data.get(key);
        } catch (err) {
          if (!(err instanceof SpilledValueLostError)) throw err;
          this.worker.valueLost?.(err);
          if (peer && this.worker.failsPeer?.(err) === true) failing.push(err);
          lost.push(key);
          continue;
        }
        data.set(key, asWireValue(value));
        bytes += state.tasks.get(key)?.nbytes ?? 0;
      } else if (state.actors.has(key) && state.tasks.get(key)?.state === "memory") {
        // An actor stays here: what travels is the handle naming it and this worker.
        data.set(key, asWireValue(actorRef(key, state.address)));
      }
    }
    // An error answer fails the peer's whole fetch, each key of it: only when
    // every key asked is one to fail (the others, answered, come with no error).
    if (failing.length > 0 && failing.length === keys.length) throw failing[0];
    this.outgoingCount++;
    this.outgoingCountTotal++;
    this.outgoingBytes += bytes;
    this.outgoingBytesTotal += bytes;
    ctx.afterReply(() => {
      this.outgoingCount--;
      this.outgoingBytes -= bytes;
    });
    return lost.length > 0 ? { status: "OK", data, lost } : { status: "OK", data };
  };
}

/**
 * Whether the `who` of a `get_data` request without `peer` (from a weft before the
 * field) names a worker: its address, with its scheme (`tcp://…`, `inproc://…`),
 * where a client gives its id. Requesters that send `peer` are told apart by it
 * alone: a client named like an address is no peer.
 */
function looksLikeWorkerAddress(who: unknown): boolean {
  return typeof who === "string" && /^[a-z][a-z0-9+.-]*:\/\//i.test(who);
}

/**
 * The arguments of a `get_data` request for `keys`, by `who` (the requesting
 * worker's address, or client's id), over `comm`: with the requester's limit
 * (see `comm/replyLimit.ts`), so that the serving worker refuses an answer
 * larger than this end accepts with an error answer naming the sizes and the
 * limit; and `peer`, true from a worker fetching a task's input, false from a
 * client, which the serving worker tells them apart by (a peer's fetch of a value
 * lost from disk may fail, where a client's waits).
 */
export function getDataArgs(
  keys: Iterable<string>,
  who: string,
  comm: Comm,
  peer: boolean,
): { keys: string[]; peer: boolean } & ReplyLimitFields {
  return withReplyLimit({ keys: [...keys], peer }, who, comm);
}

/**
 * The entries of a map as a peer may send one: a `Map`, or a plain object (a
 * peer may not send a Map); null for anything else.
 */
export function mapEntries(data: unknown): Iterable<[unknown, unknown]> | null {
  if (data instanceof Map) return data.entries();
  if (typeof data === "object" && data !== null && !Array.isArray(data)) {
    return Object.entries(data);
  }
  return null;
}

/**
 * Check a `get_data` answer: busy, or the values of the requested keys (other
 * keys are dropped), unwrapped, and those of them it says `lost`. Throws for
 * anything else.
 */
export function parseGetDataResponse(
  response: unknown,
  requested: ReadonlySet<string>,
  peer: string,
): GetDataResponse {
  if (typeof response !== "object" || response === null) {
    throw new TypeError(`unexpected get_data answer from ${peer}: not an object`);
  }
  const { status, data, lost } = response as { status?: unknown; data?: unknown; lost?: unknown };
  if (status === "busy") return { status: "busy" };
  if (status !== "OK")
    throw new TypeError(`unexpected get_data answer from ${peer}: status ${showValue(status)}`);
  const entries = mapEntries(data);
  if (entries === null)
    throw new TypeError(`unexpected get_data answer from ${peer}: data is not a map`);
  const out = new Map<string, unknown>();
  for (const [k, v] of entries) {
    if (typeof k === "string" && requested.has(k)) out.set(k, ClonedValue.unwrap(v));
  }
  if (lost === undefined) return { status: "OK", data: out };
  if (!Array.isArray(lost) || !lost.every((k) => typeof k === "string")) {
    throw new TypeError(`unexpected get_data answer from ${peer}: lost is not an array of keys`);
  }
  const lostAsked = (lost as string[]).filter((k) => requested.has(k) && !out.has(k));
  return { status: "OK", data: out, lost: lostAsked };
}
