/**
 * Workers named on the command line (`--worker`, the workers of `weft retire` and
 * `weft restart`): a worker's address, a host (every worker there) or a worker's
 * name, as a `workers=` option names them; and the one way the commands say that
 * such a selector names no worker.
 */

import type { Client } from "../../client/client.ts";
import { addressHostOrNull, namesWorker } from "../../util/address.ts";

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
