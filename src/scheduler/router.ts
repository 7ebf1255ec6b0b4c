/**
 * Delivers the state machine's messages: each to the batched stream of the
 * worker or client it is addressed to. A message for a worker or client that
 * has gone is dropped (the state machine learns of the departure separately).
 * `key-in-memory` leaves with the key's current holders, so that the client
 * can fetch the result without asking where it is.
 *
 * A worker the state machine removed and told to close (retired, or restarted)
 * leaves the cluster at once, as Dask's `retire_workers` calls `remove_worker`
 * (plugins, events log) before the worker has gone: its stream is taken out
 * of `workers` once the `close-worker` is on it, into `leaving` until its
 * connection ends, and `onWorkerRemoved` is told. Whether the worker then
 * closes its connection, and when, changes nothing but when the socket goes:
 * one it has not closed `leavingGraceMs` later (what a worker's orderly close
 * may take) is closed here, so that a worker that hung holds no socket for as
 * long as the scheduler runs (Dask's `remove_worker` leaves it open: dask/distributed#6390).
 */

import type { Logger } from "pino";
import type { BatchedSend } from "../comm/batchedSend.ts";
import type { SchedulerMessage } from "../protocol/messages.ts";
import type {
  KeyInMemoryWithHoldersMsg,
  ServerToClientMessage,
} from "../protocol/messagesSession.ts";
import type { Counters } from "./counters.ts";
import { holderAddresses } from "./state/bookkeeping.ts";
import type { SchedulerState } from "./state/schedulerState.ts";

/** The streams of the connected workers and clients, and routing to them. */
export class Router {
  /** `{worker address: stream}`. */
  readonly workers = new Map<string, BatchedSend>();
  /** `{client id: stream}`. */
  readonly clients = new Map<string, BatchedSend>();
  /**
   * The registration of each worker's stream (its `id`): another for a worker
   * registering anew at an address, which names no process (see askedWorkers.ts).
   */
  readonly registrations = new WeakMap<BatchedSend, string>();
  /**
   * `{worker address: stream}` of the workers removed and told to close whose
   * connections have not ended: what they send is no longer theirs to say.
   */
  readonly leaving = new Map<string, BatchedSend>();
  /** The timer that closes each leaving worker's connection once its grace is over. */
  private readonly leavingTimers = new Map<BatchedSend, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly state: SchedulerState,
    private readonly counters: Counters,
    private readonly logger: Logger,
    /** Told of each worker that `route` took out of `workers` (see the module comment). */
    private readonly onWorkerRemoved: (address: string) => void = () => {},
    /** How long a leaving worker may keep its connection, in ms; `Infinity`: as long as it likes. */
    private readonly leavingGraceMs = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * The connection `stream` of the worker that was at `address` ended, or is being
   * ended: no longer leaving, nor to be closed.
   */
  leavingEnded(address: string, stream: BatchedSend): void {
    if (this.leaving.get(address) === stream) this.leaving.delete(address);
    const timer = this.leavingTimers.get(stream);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.leavingTimers.delete(stream);
    }
  }

  /** Close `stream`, of the worker that left `address`, if still open once its grace is over. */
  private closeAfterGrace(address: string, stream: BatchedSend): void {
    if (!Number.isFinite(this.leavingGraceMs)) return;
    const timer = setTimeout(() => {
      this.leavingTimers.delete(stream);
      if (this.leaving.get(address) !== stream) return;
      this.leaving.delete(address);
      this.logger.info(
        { worker: address, graceMs: this.leavingGraceMs },
        "a worker told to close still had its connection open after the grace: closed it",
      );
      stream.comm.abort();
    }, this.leavingGraceMs);
    // The scheduler's own close aborts every connection: this must not keep it up.
    timer.unref();
    this.leavingTimers.set(stream, timer);
  }

  /** The registration of the worker connected at `address`, if one is. */
  registrationOf(address: string): string | undefined {
    const stream = this.workers.get(address);
    return stream === undefined ? undefined : this.registrations.get(stream);
  }

  /** Send each message to its recipient. */
  route(msgs: readonly SchedulerMessage[]): void {
    let removed: string[] | null = null;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i];
      if (m.to.kind === "worker") {
        const address = m.to.address;
        const stream = this.workers.get(address);
        this.deliver(stream, m.msg, address);
        // The state machine sends close-worker to a worker it removed (retired,
        // restarted) or, from the shell, to one it keeps (shutting the cluster down).
        if (
          m.msg.op === "close-worker" &&
          stream !== undefined &&
          !this.state.workers.has(address)
        ) {
          this.workers.delete(address);
          this.leaving.set(address, stream);
          this.closeAfterGrace(address, stream);
          (removed ??= []).push(address);
        }
      } else {
        const msg = m.msg.op === "key-in-memory" ? this.withHolders(m.msg) : m.msg;
        this.deliver(this.clients.get(m.to.id), msg, m.to.id);
      }
    }
    // After every message is on its way: what the listener does cannot reorder them.
    if (removed !== null) for (const address of removed) this.onWorkerRemoved(address);
  }

  /** Send `msg` to client `id`, if connected. */
  toClient(id: string, msg: ServerToClientMessage): boolean {
    return this.deliver(this.clients.get(id), msg, id);
  }

  private withHolders(
    msg: SchedulerMessage["msg"] & { op: "key-in-memory" },
  ): KeyInMemoryWithHoldersMsg {
    const ts = this.state.tasks.get(msg.key);
    const whoHas = ts === undefined ? [] : holderAddresses(ts);
    return {
      op: "key-in-memory",
      key: msg.key,
      typename: msg.typename,
      stimulusId: msg.stimulusId,
      whoHas,
    };
  }

  /** Send `msg` on `stream`: false when the recipient is gone and it was dropped. */
  private deliver(stream: BatchedSend | undefined, msg: unknown, to: string): boolean {
    if (stream === undefined || stream.isClosed) {
      this.counters.undeliverable++;
      this.logger.debug(
        { to, op: (msg as { op?: unknown }).op },
        "recipient gone; message dropped",
      );
      return false;
    }
    stream.send(msg);
    return true;
  }
}
