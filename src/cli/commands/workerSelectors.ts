/**
 * Workers named on the command line (`--worker`, the workers of `weft retire` and
 * `weft restart`): a worker's address, a host (every worker there) or a worker's
 * name, as a `workers=` option names them; and the one way the commands say that
 * such a selector names no worker.
 */

import type { Client } from "../../client/client.ts";
import { addressHostOrNull, namesWorker, parseHostPort, splitScheme } from "../../util/address.ts";

/** What a worker selector may be, in the words of every command's help that takes one. */
export const WORKER_SELECTOR =
  "a worker's address, a host (every worker there) or a worker's name (weft worker --name)";

/**
 * The selectors among `given` that name no worker connected to `client`'s
 * scheduler now: a typo, or a worker gone, that must not look like a worker
 * with nothing to show.
 */
export async function unmatchedWorkers(
  client: Client,
  given: readonly string[],
): Promise<string[]> {
  if (given.length === 0) return [];
  const connected = await client.workers();
  return given.filter(
    (selector) =>
      !connected.some((w) =>
        namesWorker(new Set([selector]), w.address, addressHostOrNull(w.address), w.name ?? null),
      ),
  );
}

/**
 * What `weft COMMAND` says of `--worker SELECTOR` naming no worker of the scheduler
 * at `address`, in the words weft retire and weft restart report it with.
 */
export function noWorkerMatches(command: string, selector: string, address: string): string {
  return `weft ${command}: --worker ${selector}: no connected worker matches it (weft status ${address} lists them)`;
}

/** Why the worker selectors `given` cannot be used, before asking anyone, or null. */
export function selectorsProblem(given: readonly string[]): string | null {
  return given.some((selector) => selector.trim() === "")
    ? `an empty worker selector names no worker: give ${WORKER_SELECTOR}`
    : null;
}

/**
 * `given`, with a selector written `host:port` (as the scheduler's address may be
 * given) read as an address of the scheduler's scheme, as Dask reads one, unless a
 * connected worker is named so: it otherwise matched no worker, addresses having
 * their scheme.
 */
export async function withSchemes(client: Client, given: readonly string[]): Promise<string[]> {
  if (!given.some(isHostPort)) return [...given];
  const names = new Set((await client.workers()).map((w) => w.name));
  const scheme = splitScheme(client.address).scheme;
  return given.map((s) => (isHostPort(s) && !names.has(s) ? `${scheme}://${s}` : s));
}

/** Whether `selector` is `host:port` without a scheme. */
function isHostPort(selector: string): boolean {
  if (selector.includes("://")) return false;
  try {
    return parseHostPort(selector).host !== "";
  } catch {
    return false;
  }
}
