/**
 * A `--contact-address` host name that resolves to the wildcard address here (an
 * /etc/hosts entry of `0.0.0.0`): the option's own check sees only a literal
 * wildcard, synchronously. A peer that resolves the name so dials its own machine;
 * the scheduler's check of the address (it dials it at registration) passes when
 * it runs on the worker's host, so the worker registers and its peers' fetches fail.
 * Said as a warning, not refused: the name may resolve otherwise elsewhere, where
 * the peers are, and a lookup that fails or hangs must not stop a start.
 */

import { isIP } from "node:net";
import { parseHostPort, splitScheme } from "../../util/address.ts";
import { wildcardOf } from "../../util/wildcardHost.ts";
import { lookupInChild } from "./childLookup.ts";

/**
 * The resolver's answer for `host`: every address, as `dns.promises.lookup` gives
 * them; `abandon` aborts once the answer is no longer wanted, which stops the lookup.
 */
export type HostLookup = (
  host: string,
  abandon: AbortSignal,
) => Promise<readonly { readonly address: string }[]>;

/** How long the lookup may take before the start goes on without it, in ms. */
const LOOKUP_WAIT_MS = 2_000;

/**
 * The warning for a contact address (`--contact-address`) whose host name resolves
 * to a wildcard address here, or null: for an IP, a name that resolves elsewhere,
 * or one that does not resolve in time (the scheduler's check says what it reaches).
 * Null at once when `stop` aborts (the worker told to stop meanwhile); the lookup,
 * abandoned then or after its time, is stopped, not left to hold the process.
 */
export async function contactHostWarning(
  address: string,
  lookup: HostLookup = lookupInChild,
  stop?: AbortSignal,
): Promise<string | null> {
  const { scheme, location } = splitScheme(address);
  if (scheme !== "tcp" && scheme !== "tls") return null;
  let host: string;
  try {
    ({ host } = parseHostPort(location));
  } catch {
    return null; // refused by the option's own check
  }
  if (host === "" || isIP(host) !== 0) return null;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), LOOKUP_WAIT_MS);
    timer.unref();
  });
  let onStop = () => {};
  const stopped = new Promise<null>((resolve) => {
    onStop = () => resolve(null);
    if (stop?.aborted) onStop();
    stop?.addEventListener("abort", onStop, { once: true });
  });
  const abandon = new AbortController();
  try {
    const found = await Promise.race([
      lookup(host, abandon.signal).catch(() => null),
      late,
      stopped,
    ]);
    const wildcard = found?.map((a) => wildcardOf(a.address)).find((w) => w !== null);
    if (wildcard === undefined || wildcard === null) return null;
    return `--contact-address ${address}: ${host} resolves to ${wildcard} on this machine, which means every interface to a listener: a peer that resolves it so dials its own machine, not this worker; give the worker's own IP, or correct the name's entry (/etc/hosts)`;
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", onStop);
    abandon.abort();
  }
}
