/**
 * A check of the addresses `--listen` takes, before the server tries them.
 */

import { splitScheme } from "../../util/address.ts";

/**
 * Throws when `address` (given as `flag`) is a port alone (`8786`, `tcp://8786`):
 * as Dask's addresses do, it would read as a host without a port, and Node.js
 * takes a number for an IPv4 address (8786 is 0.0.34.82), so that listening
 * fails with EADDRNOTAVAIL on an address nobody typed.
 */
export function checkListenAddress(flag: string, address: string): void {
  const { scheme, location } = splitScheme(address);
  if (!/^\d+$/.test(location)) return;
  const prefix = scheme === "tls" ? "tls" : "tcp";
  throw new Error(
    `${flag} ${address}: a port alone is read as a host; give ${prefix}://0.0.0.0:${location} (every interface) or ${prefix}://127.0.0.1:${location}`,
  );
}
