/**
 * The address a worker advertises: the listener's own, except that a wildcard
 * host (`0.0.0.0`, `::`) is replaced by an address peers can reach.
 */

import { networkInterfaces } from "node:os";
import { parseHostPort, splitScheme } from "../util/address.ts";

/** The first non-internal IPv4 address of this machine, else `127.0.0.1`. */
export function externalIPv4(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === "IPv4" && !a.internal) return a.address;
    }
  }
  return "127.0.0.1";
}

/** `listenerAddress`, with a wildcard TCP host replaced by {@link externalIPv4}. */
export function contactAddressFor(listenerAddress: string): string {
  const { scheme, location } = splitScheme(listenerAddress);
  if (scheme !== "tcp") return listenerAddress;
  const { host, port } = parseHostPort(location);
  if (host !== "0.0.0.0" && host !== "::" && host !== "") return listenerAddress;
  return `tcp://${externalIPv4()}:${port}`;
}
