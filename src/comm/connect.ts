/** `connect` and `listen` for any address: the scheme picks the transport. */

import { splitScheme } from "../util/address.ts";
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
 * Connect to `inproc://name/N`, `tcp://host:port` (a bare `host:port` is TCP)
 * or `tls://host:port` (with `options.tls`).
 */
export function connect(address: string, options: ConnectOptions = {}): Promise<Comm> {
  return scheme(address) === "inproc"
    ? connectInproc(address, options)
    : connectTcp(address, options);
}

/**
 * Listen at `inproc://`, `inproc://name`, `inproc://name/N`, `tcp://host:port`
 * or `tls://host:port` (with `options.tls`); `handler` is called with every
 * accepted comm.
 */
export function listen(
  address: string,
  handler: ConnectionHandler,
  options: ListenOptions = {},
): Promise<Listener> {
  return scheme(address) === "inproc"
    ? listenInproc(address, handler)
    : listenTcp(address, handler, options);
}
