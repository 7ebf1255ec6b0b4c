/** `connect` and `listen` for any address: the scheme picks the transport. */

import { parseHostPort, splitScheme } from "../util/address.ts";
import { asError } from "../util/asError.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import type { Comm, ConnectionHandler, ConnectOptions, Listener, ListenOptions } from "./comm.ts";
import { connectInproc, listenInproc } from "./inproc.ts";
import { connectTcp, listenTcp } from "./tcp.ts";

/** The schemes `connect` and `listen` know. */
export const SCHEMES = ["inproc", "tcp", "tls"] as const;

function scheme(address: string): string {
  if (typeof address !== "string" || address === "") {
    throw new TypeError(`expected an address string, got ${showValue(address)}`);
  }
  const s = splitScheme(address).scheme;
  if (s !== "inproc" && s !== "tcp" && s !== "tls") {
    throw new Error(
      `unknown address scheme ${JSON.stringify(s)} in ${JSON.stringify(address)}: expected one of ${SCHEMES.join(", ")}`,
    );
  }
  return s;
}

/**
 * `options` if it is an options object (undefined: none), else a TypeError
 * naming `what`: `null` crashed as a destructuring deep inside the transport,
 * and a `signal` that is no `AbortSignal` as `throwIfAborted is not a function`.
 */
/** `connect`'s option names: `{ timeout: 5000 }` was ignored, the default 30 s waited. */
const CONNECT_OPTIONS: OptionNames<ConnectOptions> = {
  timeoutMs: true,
  signal: true,
  maxFrameBytes: true,
  maxMessageBytes: true,
  stallTimeoutMs: true,
  keepAliveMs: true,
  tls: true,
};

/** `listen`'s option names. */
const LISTEN_OPTIONS: OptionNames<ListenOptions> = {
  maxFrameBytes: true,
  maxMessageBytes: true,
  stallTimeoutMs: true,
  keepAliveMs: true,
  tls: true,
  forwardOutOfBandBuffers: true,
  onRefusedPeer: true,
};

function checkedOptions<T extends object>(what: "connect" | "listen", options: T | undefined): T {
  if (options === undefined) return {} as T;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions(what, options, what === "connect" ? CONNECT_OPTIONS : LISTEN_OPTIONS);
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`${what}: signal must be an AbortSignal, got ${showValue(signal)}`);
  }
  return options;
}

/**
 * Throws for an address {@link connect} could not dial, saying why: an unknown
 * scheme, a `tcp://` or `tls://` one without a valid port, or with port 0. For
 * callers that check their arguments before anything else (`Client.connect`, a
 * Worker's `scheduler`).
 */
export function checkDialAddress(address: string): void {
  const s = scheme(address);
  if (s !== "tcp" && s !== "tls") return;
  // Port 0 is a listener's "any free port": dialled, it is refused every time, and
  // a worker (weft worker tcp://host:0, a port left out of a copied --listen) waited
  // for it until stopped, a client for its whole timeout.
  if (parseHostPort(address).port === 0) {
    throw new Error(
      `port 0 in address ${JSON.stringify(address)} cannot be connected to (it means any free port to a listener): give the port the server listens on`,
    );
  }
}

/** How {@link connect} dials instead of by the address's transport (see {@link setDialer}). */
export type Dialer = (address: string, options: ConnectOptions) => Promise<Comm>;

let dialer: Dialer | null = null;

/**
 * Have every {@link connect} of this thread go through `dial` (null: by the
 * address's transport again). A worker's pool thread sets it, so that a
 * task's client connects through the worker's main thread (`bridge.ts`).
 */
export function setDialer(dial: Dialer | null): void {
  dialer = dial;
}

/**
 * Connect to `inproc://name/N`, `tcp://host:port` (a bare `host:port` is TCP)
 * or `tls://host:port` (with `options.tls`). Never throws: a bad address or
 * option rejects, as a failure to connect does.
 */
export async function connect(address: string, given?: ConnectOptions): Promise<Comm> {
  const s = scheme(address);
  const options = checkedOptions("connect", given);
  if (dialer !== null) return dialer(address, options);
  return s === "inproc" ? connectInproc(address, options) : connectTcp(address, options);
}

/**
 * Listen at `inproc://`, `inproc://name`, `inproc://name/N`, `tcp://host:port`
 * or `tls://host:port` (with `options.tls`); `handler` is called with every
 * accepted comm. Never throws: a bad address or option rejects. An exception
 * `handler` throws, or a rejection of the promise it returns, aborts that
 * comm only (see {@link ConnectionHandler}).
 */
export async function listen(
  address: string,
  handler: ConnectionHandler,
  given?: ListenOptions,
): Promise<Listener> {
  const options = checkedOptions("listen", given);
  // Else every connection it accepted was aborted, calling a number, without a word.
  if (typeof handler !== "function") {
    throw new TypeError(
      `listen: the handler must be a function of each accepted comm, got ${showValue(handler)}`,
    );
  }
  const guarded = guardHandler(handler);
  return scheme(address) === "inproc"
    ? listenInproc(address, guarded)
    : listenTcp(address, guarded, options);
}

/**
 * `handler`, called so that its failure ends its connection, not the process.
 * An async handler reading its comm rejects when the connection breaks (a
 * reset, bytes that are not weft's): called bare from the socket's event, that
 * rejection was unhandled, and an echo server ended on the first HTTP request
 * sent to its port.
 */
function guardHandler(handler: ConnectionHandler): (comm: Comm) => void {
  return (comm) =>
    callGuarded(
      () => handler(comm),
      (err) => comm.abort(asError(err)),
    );
}
