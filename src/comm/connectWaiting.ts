/**
 * A connection to a server that may not be listening yet: a scheduler started
 * together with its workers and clients. Dask's `connect` waits for it the same
 * way (distributed.comm.core.connect retries until its timeout).
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Comm, ConnectOptions } from "./comm.ts";
import { connect } from "./connect.ts";
import { ConnectError } from "./errors.ts";

/** Options of {@link connectWaiting}. */
export interface ConnectWaitingOptions extends ConnectOptions {
  /** How long to keep trying after a refusal, from the first try (ms); also each try's own timeout. */
  readonly timeoutMs: number;
  /** Called once, at the first refusal: the caller says that it waits. */
  readonly onFirstRefusal?: () => void;
  /** True when the caller is closing: stop trying and fail with the last refusal. */
  readonly stopped?: () => boolean;
}

/**
 * Connect to `address`. A refusal (nothing listens there yet) is tried again,
 * after 50 ms and then twice as long each time up to 1 s, until `timeoutMs` has
 * passed; the refusal at the end fails with a {@link ConnectError} saying how
 * long it was tried. Any other failure (an unknown host, a timeout, TLS) fails
 * at once, as it would not mend by waiting.
 */
export async function connectWaiting(
  address: string,
  options: ConnectWaitingOptions,
): Promise<Comm> {
  const { onFirstRefusal, stopped, ...connectOptions } = options;
  const deadline = Date.now() + options.timeoutMs;
  let pause = 50;
  let told = false;
  for (;;) {
    try {
      return await connect(address, connectOptions);
    } catch (err) {
      const refused = err instanceof ConnectError && err.code === "ECONNREFUSED";
      if (!refused) throw err;
      if (deadline - Date.now() <= 0 || stopped?.() === true) {
        if (!told) throw err;
        throw new ConnectError(
          `${err.message}: still refused after ${options.timeoutMs} ms`,
          err.address,
          "ECONNREFUSED",
          { cause: err },
        );
      }
      if (!told) {
        told = true;
        onFirstRefusal?.();
      }
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      pause = Math.min(pause * 2, 1_000);
    }
  }
}
