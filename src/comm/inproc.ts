/**
 * The in-process transport: both ends live in this JavaScript realm and
 * messages are passed by reference (no copy, no serialisation), delivered
 * asynchronously (in a microtask) and in order. Addresses are
 * `inproc://name/N`; a process-wide registry maps them to listeners.
 *
 * Because values are shared, a sender must not mutate a message after sending it.
 */

import type { Comm, ConnectionHandler, ConnectOptions, Listener } from "./comm.ts";
import { CommBase } from "./commBase.ts";
import { CommAbortedError, ConnectError } from "./errors.ts";

/** The name used by `inproc://` addresses that give none. */
export const DEFAULT_INPROC_NAME = "local";

const registry = new Map<string, InprocListener>();
let counter = 0;

const CLOSE = Symbol("close");

/** One end of an in-process connection. */
export class InprocComm extends CommBase {
  private peer: InprocComm | null = null;
  private outbox: unknown[] = [];
  private flushScheduled = false;
  private closing = false;
  private readonly flushed: (() => void)[] = [];
  /**
   * While something waits on this end (a result awaited: see `LoopHold`), a timer
   * that Node.js counts as work left, as a TCP socket `ref`'d is. Without it, a
   * program awaiting a task that waited on a worker paused for memory (whose
   * monitor's timer is unref'd) had nothing left to run and ended, exit code 13.
   */
  private keepAlive: NodeJS.Timeout | null = null;

  constructor(
    readonly localAddress: string,
    readonly peerAddress: string,
  ) {
    super();
  }

  /** Join two ends. */
  static pair(a: InprocComm, b: InprocComm): void {
    a.peer = b;
    b.peer = a;
  }

  send(msg: unknown): Promise<void> {
    if (this.closing || this.isClosed) return Promise.reject(this.closedError());
    this.enqueue(msg);
    return Promise.resolve();
  }

  keepProcessAlive(keep: boolean): void {
    if (!keep || this.closing || this.isClosed) {
      this.letProcessEnd();
      return;
    }
    if (this.keepAlive !== null) return;
    this.keepAlive = setInterval(() => {}, 2 ** 30);
    void this.closed.then(() => this.letProcessEnd());
  }

  private letProcessEnd(): void {
    if (this.keepAlive === null) return;
    clearInterval(this.keepAlive);
    this.keepAlive = null;
  }

  close(): Promise<void> {
    if (this.closing || this.isClosed) return this.closed.then(() => undefined);
    this.closing = true;
    this.enqueue(CLOSE);
    this.finish(null);
    return new Promise((resolve) => this.flushed.push(resolve));
  }

  abort(error?: Error): void {
    if (this.isClosed) return;
    this.closing = true;
    this.outbox = [];
    this.finish(error ?? new CommAbortedError("comm aborted"), true);
    const peer = this.peer;
    if (peer !== null) queueMicrotask(() => peer.remoteClosed());
  }

  private enqueue(item: unknown): void {
    this.outbox.push(item);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const items = this.outbox;
    this.outbox = [];
    const peer = this.peer;
    for (const item of items) {
      if (peer === null) break;
      if (item === CLOSE) peer.remoteClosed();
      else peer.deliver(item);
    }
    for (const resolve of this.flushed.splice(0)) resolve();
  }

  private remoteClosed(): void {
    this.closing = true;
    this.finish(null);
  }
}

/** A registered in-process listener. */
export class InprocListener implements Listener {
  private open = true;
  constructor(
    readonly address: string,
    private readonly handler: ConnectionHandler,
  ) {}

  /** Accept a connection from `connector`'s end; returns the listener's end. */
  accept(connectorAddress: string): InprocComm {
    const server = new InprocComm(this.address, connectorAddress);
    queueMicrotask(() => this.handler(server));
    return server;
  }

  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    if (registry.get(this.address) === this) registry.delete(this.address);
  }
}

/**
 * The next free `inproc://name/N`. The counter skips an address a listener
 * holds: one taken exactly (`listen("inproc://name/N")`) before the counter got
 * there would otherwise be handed out again, the new listener silently taking
 * the old one's connections.
 */
function newAddress(name: string): string {
  for (;;) {
    counter += 1;
    const address = `inproc://${name}/${counter}`;
    if (!registry.has(address)) return address;
  }
}

/**
 * Listen at `address`: `inproc://` (gets `inproc://local/N`), `inproc://name`
 * (gets `inproc://name/N`) or an exact `inproc://name/N`, which must be free.
 */
export async function listenInproc(address: string, handler: ConnectionHandler): Promise<Listener> {
  if (!address.startsWith("inproc://")) {
    throw new Error(`not an inproc address: ${JSON.stringify(address)}`);
  }
  const location = address.slice("inproc://".length);
  let full: string;
  if (location.includes("/")) {
    if (registry.has(address)) throw new Error(`inproc address ${address} is already in use`);
    full = address;
  } else {
    full = newAddress(location === "" ? DEFAULT_INPROC_NAME : location);
  }
  const listener = new InprocListener(full, handler);
  registry.set(full, listener);
  return listener;
}

/** Whether an in-process listener of this process is at `address` now. */
export function hasInprocListener(address: string): boolean {
  return registry.has(address);
}

/** Connect to the in-process listener at `address`. */
export async function connectInproc(address: string, options: ConnectOptions = {}): Promise<Comm> {
  options.signal?.throwIfAborted();
  const listener = registry.get(address);
  if (listener === undefined) {
    throw new ConnectError(
      `cannot connect to ${address}: no in-process listener at that address`,
      address,
      "ECONNREFUSED",
    );
  }
  const client = new InprocComm(newAddress(DEFAULT_INPROC_NAME), address);
  const server = listener.accept(client.localAddress);
  InprocComm.pair(client, server);
  return client;
}
