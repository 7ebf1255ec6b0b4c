/**
 * A connection to a server that may not be listening yet (a scheduler started
 * together with its workers and clients), or not reachable yet (its name not
 * resolving yet). Dask's `connect` waits for it the same way
 * (distributed.comm.core.connect retries any OSError until its timeout), and a
 * Dask worker keeps trying until its `death_timeout`, if it has one.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Comm, ConnectOptions } from "./comm.ts";
import { connect } from "./connect.ts";
import { ConnectError, isTransientConnectError } from "./errors.ts";

/**
 * Where {@link connectWaiting} dials: an address, or a function that says it
 * anew before each try (a scheduler file read again: a refused address is
 * then replaced by the one a scheduler started again wrote there).
 */
export type WaitedAddress = string | (() => Promise<string>);

/** How often a long wait is told of by default (`onStillFailing`), in ms: Dask's worker logs each try. */
export const STILL_FAILING_EVERY_MS = 10_000;

/**
 * The least time a try is given when the wait is (nearly) over, in ms: enough
 * for a TCP connect and a TLS handshake over a wide-area link, so that the
 * last try at the end of the wait is a real one.
 */
export const LAST_TRY_FLOOR_MS = 250;

/**
 * How long one try may take: `timeoutMs`, but no longer than the `msLeft` of
 * the wait (as Dask's `connect` bounds each try by its `time_left()`), and at
 * least {@link LAST_TRY_FLOOR_MS} (unless `timeoutMs` is less).
 */
export function tryTimeoutWithin(timeoutMs: number, msLeft: number): number {
  return Math.min(timeoutMs, Math.max(msLeft, LAST_TRY_FLOOR_MS));
}

/** A failed try that {@link connectWaiting} waits past, as its callbacks are told of it. */
export interface WaitedFailure {
  /** The address tried. */
  readonly address: string;
  /**
   * Why it failed, in a few words: `refused`, `getaddrinfo ENOTFOUND host`,
   * `connect EHOSTUNREACH 10.0.0.1:8786`, `timed out after 10000 ms`.
   */
  readonly reason: string;
  /** True when it was refused: nothing listens there (yet). */
  readonly refused: boolean;
  /** How long it has been tried, from the first try (or `startedAt`) (ms). */
  readonly waitedMs: number;
}

/** Options of {@link connectWaiting}. */
export interface ConnectWaitingOptions extends ConnectOptions {
  /**
   * Each try's own timeout (ms), cut to what is left of `waitMs` (see
   * {@link tryTimeoutWithin}); also how long to keep trying, unless `waitMs` is given.
   */
  readonly timeoutMs: number;
  /**
   * How long to keep trying after failures that may mend, from the first try
   * (or `startedAt`) (ms); `Infinity` until `stopped` says so. Default `timeoutMs`.
   */
  readonly waitMs?: number;
  /**
   * When the wait began, if before the first try (`Date.now()`: a worker's
   * start, which `deathTimeoutMs` bounds as a whole): `waitMs`, and the times
   * told, count from it. Default: the first try.
   */
  readonly startedAt?: number;
  /** Called once, at the first failure waited past: the caller says that it waits, and why. */
  readonly onFirstFailure?: (failure: WaitedFailure) => void;
  /**
   * Called every `stillFailingEveryMs` while failures go on after the first,
   * with the last: the caller shows that it still waits.
   */
  readonly onStillFailing?: (failure: WaitedFailure) => void;
  /**
   * Called every `stillFailingEveryMs` while one try goes on without an
   * answer (its packets dropped, a name still resolving), with how long it
   * has: the caller shows that it still waits, where the first failure comes
   * only at the try's timeout (`timeoutMs`: a worker's 30 s by default).
   */
  readonly onTryPending?: (pending: {
    readonly address: string;
    readonly pendingMs: number;
  }) => void;
  /** How often `onStillFailing` and `onTryPending` are called (ms). Default 10,000. */
  readonly stillFailingEveryMs?: number;
  /** True when the caller is closing: stop trying and fail with the last failure. */
  readonly stopped?: () => boolean;
}

/**
 * Why a connect failed, in a few words (see {@link WaitedFailure.reason}):
 * the system's own words where it has them. `tryTimeoutMs` is the try's
 * timeout, for one that ran out.
 */
export function connectFailureReason(err: ConnectError, tryTimeoutMs: number): string {
  if (err.code === "ECONNREFUSED") return "refused";
  if (err.cause instanceof Error) {
    const words = err.cause.message;
    return err.code === null || words.includes(err.code) ? words : `${words} (${err.code})`;
  }
  if (err.code === "ETIMEDOUT") return `timed out after ${tryTimeoutMs} ms`;
  return err.message;
}

/** The log line of a first failure to reach a scheduler, which a worker and a client both wait past. */
export function schedulerWaitLine({ reason, refused }: WaitedFailure): string {
  return refused
    ? "the scheduler refuses connections (not started yet?): trying again"
    : `the scheduler cannot be reached (${reason}): trying again`;
}

/** The log line of a try to reach the scheduler at `address` that has had no answer for `pendingMs`. */
export function schedulerPendingLine(address: string, pendingMs: number): string {
  return `still waiting for the scheduler at ${address}: a connection to it has had no answer for ${Math.round(pendingMs / 1000)} s`;
}

/**
 * Connect to `address` (or to what it says before each try). A failure that
 * may mend (see `isTransientConnectError`: refused, a name that does not
 * resolve yet, a network not reachable, a try timed out, a reset) is tried
 * again, after 50 ms and then twice as long each time up to 1 s, until
 * `waitMs` has passed (each try within what is left of it, see
 * {@link tryTimeoutWithin}); the failure at the end is a {@link ConnectError}
 * saying how long it was tried. Anything else (TLS, a bad address) fails at
 * once, as it would not mend by waiting; so does a failure of the address
 * function. `signal` aborted ends the wait at once, the try in flight too (its
 * socket destroyed, a TLS handshake included), rejecting with its reason.
 */
export async function connectWaiting(
  address: WaitedAddress,
  options: ConnectWaitingOptions,
): Promise<Comm> {
  const {
    onFirstFailure,
    onStillFailing,
    onTryPending,
    stopped,
    waitMs: _,
    stillFailingEveryMs: __,
    startedAt: ___,
    ...connectOptions
  } = options;
  const waitMs = options.waitMs ?? options.timeoutMs;
  const reportEveryMs = options.stillFailingEveryMs ?? STILL_FAILING_EVERY_MS;
  const started = Math.min(options.startedAt ?? Date.now(), Date.now());
  const deadline = started + waitMs;
  let nextReport = started + reportEveryMs;
  let pause = 50;
  let told = false;
  for (;;) {
    const target = typeof address === "string" ? address : await address();
    // Bounded by the wait: a try of the full timeoutMs begun near its end would overrun it.
    const tryMs = tryTimeoutWithin(options.timeoutMs, deadline - Date.now());
    const tryStarted = Date.now();
    // Not to keep a process alive: the try itself does while it is worth waiting on.
    const tellPending = () => {
      // Its caller closing no longer waits, whatever the try still does.
      if (stopped?.() === true) return;
      nextReport = Date.now() + reportEveryMs;
      onTryPending?.({ address: target, pendingMs: Date.now() - tryStarted });
      pending = setTimeout(tellPending, reportEveryMs).unref();
    };
    let pending =
      onTryPending === undefined ? undefined : setTimeout(tellPending, reportEveryMs).unref();
    try {
      return await connect(target, { ...connectOptions, timeoutMs: tryMs }).finally(() =>
        clearTimeout(pending),
      );
    } catch (err) {
      if (!isTransientConnectError(err)) throw err;
      const refused = err.code === "ECONNREFUSED";
      const isStopped = stopped?.() === true;
      if (deadline - Date.now() <= 0 || isStopped) {
        // A first try that came only once a wait was over (a worker whose start before it
        // took its whole death timeout, on a loaded host) says so: bare, its refusal read
        // as if no wait had been given (a refusal comes at once: one at the deadline was
        // made at its end). Not a try begun in time that took the whole wait (a scheduler
        // that never answers): its own "timed out … after N ms" says it all.
        if (!told && !isStopped && waitMs > 0 && (refused || tryStarted >= deadline)) {
          throw new ConnectError(
            `${err.message}: ${refused ? "refused" : "failed"} at its first try, made only after the ${waitMs} ms wait was over`,
            err.address,
            err.code,
            { cause: err },
          );
        }
        if (!told) throw err;
        const triedMs = isStopped ? Date.now() - started : waitMs;
        throw new ConnectError(
          `${err.message}: still ${refused ? "refused" : "failing"} after ${triedMs} ms`,
          err.address,
          err.code,
          { cause: err },
        );
      }
      const failure = (): WaitedFailure => ({
        address: target,
        reason: connectFailureReason(err, tryMs),
        refused,
        waitedMs: Date.now() - started,
      });
      if (!told) {
        told = true;
        onFirstFailure?.(failure());
      } else if (Date.now() >= nextReport) {
        nextReport = Date.now() + reportEveryMs;
        onStillFailing?.(failure());
      }
      await pauseUnlessAborted(Math.min(pause, Math.max(0, deadline - Date.now())), options.signal);
      pause = Math.min(pause * 2, 1_000);
    }
  }
}

/**
 * Wait `ms`, unless `signal` is aborted first: then reject with its reason, as the
 * try cut short does (the timers' own rejection is a bare "The operation was aborted").
 */
async function pauseUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    signal.throwIfAborted();
    throw err;
  }
}
