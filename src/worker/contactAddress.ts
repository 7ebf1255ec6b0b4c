/**
 * Addresses other machines can use: the one a worker advertises (the
 * listener's own, except that a wildcard host — `0.0.0.0`, `::` — is replaced
 * by an address peers can reach), and the one `weft scheduler` prints when it
 * listens on a wildcard host.
 */

import { networkInterfaces } from "node:os";
import { parseHostPort, splitScheme } from "../util/address.ts";

/**
 * The first non-internal `family` address of this machine's interfaces, or
 * null. IPv6 link-local addresses (`fe80::/10`) are skipped: another machine
 * reaches one only with a zone index (`%eth0`), which a `tcp://` address
 * cannot carry.
 */
export function firstExternalAddress(family: "IPv4" | "IPv6"): string | null {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family !== family || a.internal) continue;
      if (family === "IPv6" && /^fe[89ab]/i.test(a.address)) continue;
      return a.address;
    }
  }
  return null;
}

/** The first non-internal IPv4 address of this machine, else `127.0.0.1`. */
export function externalIPv4(): string {
  return firstExternalAddress("IPv4") ?? "127.0.0.1";
}

/**
 * The scheme (`tcp`, `tls`), host and port of a TCP address on a wildcard host
 * (`0.0.0.0`, `::`, none), else null.
 */
function wildcardTcp(address: string): { scheme: string; host: string; port: number } | null {
  const { scheme, location } = splitScheme(address);
  if (scheme !== "tcp" && scheme !== "tls") return null;
  const { host, port } = parseHostPort(location);
  return host === "0.0.0.0" || host === "::" || host === "" ? { scheme, host, port } : null;
}

/** `listenerAddress`, with a wildcard TCP host replaced by {@link externalIPv4}. */
export function contactAddressFor(listenerAddress: string): string {
  const wildcard = wildcardTcp(listenerAddress);
  if (wildcard === null) return listenerAddress;
  return `${wildcard.scheme}://${externalIPv4()}:${wildcard.port}`;
}

/**
 * For a server listening at `listenerAddress` on a wildcard host, the same
 * port at an address of this machine that other machines can use: the first
 * non-internal IPv4 address for `0.0.0.0`; for `::` the first non-internal
 * IPv6 one, else IPv4 (a `::` listener takes both). Null for any other
 * address, or when no interface has one (a machine without a network).
 */
export function reachableAddressFor(listenerAddress: string): string | null {
  const wildcard = wildcardTcp(listenerAddress);
  if (wildcard === null) return null;
  if (wildcard.host !== "0.0.0.0") {
    const ip6 = firstExternalAddress("IPv6");
    if (ip6 !== null) return `${wildcard.scheme}://[${ip6}]:${wildcard.port}`;
  }
  const ip4 = firstExternalAddress("IPv4");
  return ip4 === null ? null : `${wildcard.scheme}://${ip4}:${wildcard.port}`;
}
