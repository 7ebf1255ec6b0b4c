/**
 * A worker asking the scheduler to retire it, to leave the cluster without
 * losing results (Dask's `close_gracefully`): the scheduler copies the results
 * only this worker holds to others, then tells it to close. While no other
 * worker can take them, it asks again, every second for up to a minute.
 *
 * Apart from the worker because it is a conversation with the scheduler (as
 * a client) with its own waits; the worker only closes once it is over.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { Client } from "../client/client.ts";

/** How long a worker leaving gracefully asks again to be retired when no other worker can take its results. */
const RETIRE_RETRY_MS = 60_000;
const RETIRE_RETRY_INTERVAL_MS = 1_000;

/** What asking to be retired needs of the worker. */
export interface RetirementHost {
  readonly logger: Logger;
  /** The worker's address, as the scheduler knows it. */
  readonly address: string;
  /** The worker's own client (the one of its task code), connected to its scheduler. */
  taskClient(): Promise<Client>;
  /** True once the worker is closing anyway: stop asking. */
  closing(): boolean;
}

/**
 * Ask the scheduler to retire this worker, again while it cannot yet: resolves
 * once it did, gave up, or the worker is closing meanwhile (never rejects: the
 * worker closes next whatever the answer).
 */
export async function askToBeRetired(host: RetirementHost): Promise<void> {
  try {
    const client = await host.taskClient();
    const giveUpAt = Date.now() + RETIRE_RETRY_MS;
    for (;;) {
      const { failed } = await client.retireWorkers([host.address]);
      const why = failed[0]?.reason;
      if (why === undefined || host.closing()) break;
      // No other worker can take its results now (they are starting, or
      // retiring too), or another retirement has it: ask again for a while.
      const worthWaiting =
        why.startsWith("no other running worker") || why === "it is being retired already";
      if (!worthWaiting || Date.now() >= giveUpAt) {
        host.logger.warn({ reason: why }, "the scheduler could not retire this worker; closing");
        break;
      }
      host.logger.info(
        { reason: why },
        "the scheduler cannot retire this worker yet; asking again",
      );
      await sleep(RETIRE_RETRY_INTERVAL_MS);
      if (host.closing()) break;
    }
  } catch (err) {
    // Told to close meanwhile, this worker closed its client: the answer did not come.
    if (!host.closing()) {
      host.logger.warn({ err }, "could not ask the scheduler to retire this worker; closing");
    }
  }
}
