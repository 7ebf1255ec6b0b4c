/**
 * A connection a pool thread made through the worker's main thread (see
 * `comm/bridge.ts`), as the main thread holds it: it notes whether it carries
 * a client's session with the scheduler (a task's `getClient()`), so that when
 * the thread ends (an idle thread let go, the executor closing) the scheduler
 * is told the client leaves, as a client closing itself would. Cut instead,
 * the connection broke under the scheduler (`read ECONNRESET`), which it
 * warns of as a client lost.
 */

import type { Comm, CommCloseInfo } from "../comm/comm.ts";
import type { PeerLimit } from "../comm/peerLimit.ts";
import { newStimulusId } from "../util/stimulusId.ts";

/** A pool thread's connection, passing everything through to the one it wraps. */
export class ThreadConnection implements Comm {
  /** The client whose session this is: its first message was a `register-client`. */
  private clientId: string | null = null;
  private sentAny = false;
  /**
   * The wrapped comm's, where it has one (TCP): the bridge tells the thread
   * whether the connection limits message sizes (and then the worker's own
   * `maxMessageBytes`) by whether this is present.
   */
  readonly limitSendsTo?: (maxMessageBytes: number, whose: string) => void;

  /** The wrapped comm's own limit, where it has one. */
  readonly maxMessageBytes?: number;

  /**
   * The wrapped comm's, where it has one (TCP): the bridge asks it, so that an
   * rpc of the thread whose request or answer holds a value that cannot be
   * read fails that call alone, rather than the connection closing under it.
   */
  readonly readUnreadable?: () => void;

  constructor(
    private readonly comm: Comm,
    /**
     * The worker's address, which a client's `register-client` is given on its
     * way, so that the scheduler lets the client go with the worker (see
     * `scheduler/workerClients.ts`); null: none (the worker has none yet).
     */
    private readonly worker: string | null = null,
  ) {
    if (comm.maxMessageBytes !== undefined) this.maxMessageBytes = comm.maxMessageBytes;
    if (comm.limitSendsTo !== undefined) {
      this.limitSendsTo = (maxMessageBytes, whose) => comm.limitSendsTo?.(maxMessageBytes, whose);
    }
    if (comm.readUnreadable !== undefined) this.readUnreadable = () => comm.readUnreadable?.();
  }

  get localAddress(): string {
    return this.comm.localAddress;
  }

  get peerAddress(): string {
    return this.comm.peerAddress;
  }

  get isClosed(): boolean {
    return this.comm.isClosed;
  }

  get closed(): Promise<CommCloseInfo> {
    return this.comm.closed;
  }

  send(msg: unknown, limit?: PeerLimit): Promise<void> {
    if (!this.sentAny) {
      this.sentAny = true;
      this.clientId = registeringClient(msg);
      if (this.clientId !== null && this.worker !== null) {
        return this.comm.send({ ...(msg as object), worker: this.worker }, limit);
      }
    }
    return this.comm.send(msg, limit);
  }

  recv(): Promise<unknown> {
    return this.comm.recv();
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return this.comm[Symbol.asyncIterator]();
  }

  close(): Promise<void> {
    return this.comm.close();
  }

  abort(error?: Error): void {
    this.comm.abort(error);
  }

  /**
   * End it for its thread, which has ended or is ending: a client's session
   * says `close-client` first; then an orderly close, waited for at most
   * `graceMs` (the caller aborts what is left).
   */
  async leave(graceMs: number): Promise<void> {
    if (this.comm.isClosed) return;
    if (this.clientId !== null) {
      const bye = {
        op: "close-client",
        clientId: this.clientId,
        stimulusId: newStimulusId("thread-ended"),
      };
      await this.comm.send([bye]).catch(() => {});
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.comm.close(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** The client a `register-client` message names; null for any other message. */
function registeringClient(msg: unknown): string | null {
  if (typeof msg !== "object" || msg === null) return null;
  const { op, clientId } = msg as { op?: unknown; clientId?: unknown };
  return op === "register-client" && typeof clientId === "string" ? clientId : null;
}
