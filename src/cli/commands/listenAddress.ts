/**
 * A check of the addresses `--listen` takes, before the server tries them.
 */

import { SCHEMES } from "../../comm/connect.ts";
import { parseHostPort, splitScheme } from "../../util/address.ts";

/**
 * Throws when `address` (given as `flag`) is of a scheme no listener takes, or a port alone (`8786`, `tcp://8786`):
 * as Dask's addresses do, it would read as a host without a port, and Node.js
 * takes a number for an IPv4 address (8786 is 0.0.34.82), so that listening
 * fails with EADDRNOTAVAIL on an address nobody typed.
 */
export function checkListenAddress(flag: string, address: string): void {
  const { scheme, location } = splitScheme(address);
  // The scheduler's listener said it in the comm's words, naming no flag.
  if (!(SCHEMES as readonly string[]).includes(scheme)) {
    throw new Error(
      `${flag} ${address}: unknown address scheme ${JSON.stringify(scheme)}: expected one of ${SCHEMES.join(", ")}`,
    );
  }
  if (!/^\d+$/.test(location)) {
    if (scheme === "tcp" || scheme === "tls") checkHostPort(flag, location);
    return;
  }
  const prefix = scheme === "tls" ? "tls" : "tcp";
  throw new Error(
    `${flag} ${address}: a port alone is read as a host; give ${prefix}://0.0.0.0:${location} (every interface) or ${prefix}://127.0.0.1:${location}`,
  );
}

/**
 * Throws, naming `flag`, when `location` is no host:port a listener takes (as
 * `tcp.ts` reads it, the port 0 when none): the listener's own refusal named
 * only the address (`invalid port "x" in address ":x"`), never the flag.
 */
function checkHostPort(flag: string, location: string): void {
  try {
    parseHostPort(location, 0);
  } catch (err) {
    throw new Error(`${flag}: ${(err as Error).message}`);
  }
}
