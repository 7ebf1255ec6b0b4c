/**
 * Whether a host names the wildcard address, which a listener takes as every
 * interface and a dialler as its own machine: so no address to advertise to
 * peers on other hosts. Not only `0.0.0.0` and `::`: the resolver (inet_aton)
 * takes `0`, `0.0`, `000.000.000.000` and `0x0` as 0.0.0.0 too (`nc -l 0`
 * is a common shorthand), and `::ffff:0.0.0.0` is 0.0.0.0 mapped into IPv6.
 */

import { isIPv6 } from "node:net";

/** The wildcard forms a host is normalised to by the WHATWG URL parser, as inet_aton reads them. */
const WILDCARDS: ReadonlySet<string> = new Set(["0.0.0.0", "[::]", "[::ffff:0:0]"]);

/**
 * The wildcard address `host` (a host name or an IP, IPv6 without brackets)
 * stands for, `0.0.0.0` or `::`, or null when it is none.
 */
export function wildcardOf(host: string): "0.0.0.0" | "::" | null {
  let normal: string;
  try {
    normal = new URL(`http://${isIPv6(host) ? `[${host}]` : host}`).hostname;
  } catch {
    return null; // no host a URL takes, so no IP either
  }
  if (!WILDCARDS.has(normal)) return null;
  return normal === "[::]" ? "::" : "0.0.0.0";
}
