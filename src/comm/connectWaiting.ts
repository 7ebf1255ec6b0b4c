/**
 * A connection to a server that may not be listening yet: a scheduler started
 * together with its workers and clients. Dask's `connect` waits for it the same
 * way (distributed.comm.core.connect retries until its timeout), and a Dask
 * worker keeps trying until its `death_timeout`, if it has one.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Comm, ConnectOptions } from "./comm.ts";
import { connect } from "./connect.ts";
import { ConnectError } from "./errors.ts";

/**
 * Where {@link connectWaiting} dials: an address, or a function that says it
 * anew before each try (a scheduler file read again: a refused address is
 * then replaced by the one a scheduler started again wrote there).
 */
export type WaitedAddress = string | (() => Promise<string>);

/** How often a long wait is told of by default (`onStillRefused`), in ms: Dask's worker logs each try. */
const STILL_REFUSED_EVERY_MS = 10_000;

/** Options of {@link connectWaiting}. */
export interface ConnectWaitingOptions extends ConnectOptions {
  /** Each try's own timeout (ms); also how long to keep trying, unless `waitMs` is given. */
  readonly timeoutMs: number;
  /**
   * How long to keep trying after refusals, from the first try (ms);
   * `Infinity` until `stopped` says so. Default `timeoutMs`.
   */
  readonly waitMs?: number;
  /** Called once, at the first refusal, with the address that refused: the caller says that it waits. */
  readonly onFirstRefusal?: (address: string) => void;
  /**
   * Called every `stillRefusedEveryMs` while refusals go on after the first,
   * with the address that refused last and how long it has been tried (ms):
   * the caller shows that it still waits.
   */
  readonly onStillRefused?: (address: string, waitedMs: number) => void;
  /** How often `onStillRefused` is called (ms). Default 10,000. */
  readonly stillRefusedEveryMs?: number;
  /** True when the caller is closing: stop trying and fail with the last refusal. */
  readonly stopped?: () => boolean;
}

/**
 * Connect to `address` (or to what it says before each try). A refusal
 * (nothing listens there yet) is tried again, after 50 ms and then twice as
 * long each time up to 1 s, until `waitMs` has passed; the refusal at the end
 * fails with a {@link ConnectError} saying how long it was tried. Any other
 * failure (an unknown host, a timeout, TLS) fails at once, as it would not
 * mend by waiting; so does a failure of the address function.
 */
export async function connectWaiting(
  address: WaitedAddress,
  options: ConnectWaitingOptions,
): Promise<Comm> {
  const {
    onFirstRefusal,
    onStillRefused,
    stopped,
    waitMs: _,
    stillRefusedEveryMs: __,
    ...connectOptions
  } = options;
  const waitMs = options.waitMs ?? options.timeoutMs;
  const reportEveryMs = options.stillRefusedEveryMs ?? STILL_REFUSED_EVERY_MS;
  const started = Date.now();
  const deadline = started + waitMs;
  let nextReport = started + reportEveryMs;
  let pause = 50;
  let told = false;
  for (;;) {
    const target = typeof address === "string" ? address : await address();
    try {
      return await connect(target, connectOptions);
    } catch (err) {
      const refused = err instanceof ConnectError && err.code === "ECONNREFUSED";
      if (!refused) throw err;
      if (deadline - Date.now() <= 0 || stopped?.() === true) {
        if (!told) throw err;
        throw new ConnectError(
          `${err.message}: still refused after ${waitMs} ms`,
          err.address,
          "ECONNREFUSED",
          { cause: err },
        );
      }
      if (!told) {
        told = true;
        onFirstRefusal?.(target);
      } else if (Date.now() >= nextReport) {
        nextReport = Date.now() + reportEveryMs;
        onStillRefused?.(target, Date.now() - started);
      }
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      pause = Math.min(pause * 2, 1_000);
    }
  }
}
