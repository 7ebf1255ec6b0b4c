/**
 * How the commands print where the HTTP endpoints are. A server listening on
 * every interface is at `http://0.0.0.0:8787`, which no other machine can
 * open, nor today's browsers on this one: the same port at an address of
 * this machine's network is printed instead, as the cluster's own address is
 * (Dask prints its dashboard at its `get_ip()`).
 */

import { reachableAddressFor } from "../../worker/contactAddress.ts";

/** `url` (`http://host:port`, as `HttpEndpoints.url` gives it), with a wildcard host replaced by an address of this machine; null if it has none. */
export function reachableHttpUrl(url: string): string | null {
  // Not through URL: it drops port 80 as HTTP's default, and `tcp://0.0.0.0:` is no address.
  const reachable = reachableAddressFor(`tcp${url.slice("http".length)}`);
  return reachable === null ? null : `http${reachable.slice("tcp".length)}`;
}

/** `http at …`'s text: the reachable URL, then the one listened on; else that one alone. */
export function httpUrlShown(url: string): string {
  const reachable = reachableHttpUrl(url);
  return reachable === null ? url : `${reachable} (listening on ${url})`;
}
