/**
 * The options of `Client.connect`, and their checks: apart from the client, which
 * uses them once, while connecting.
 */

import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { frameLimitsProblem } from "../comm/comm.ts";
import { type TlsCredentials, tlsCredentialsProblem } from "../comm/tls.ts";
import { isStandInClientId } from "../scheduler/state/clientInfo.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { optionsOf } from "./argChecks.ts";

/** Options of {@link Client.connect}. */
export interface ClientOptions {
  /**
   * Connect (to the scheduler, and to workers when fetching) within this many
   * ms. Default 30,000. A scheduler that cannot be reached yet (refusing the
   * connection: not listening yet, started together with its clients; its
   * host name not resolving yet; its network not reachable; a try timed out)
   * is asked again until then, as Dask's client waits for its scheduler.
   */
  timeoutMs?: number;
  /**
   * Called once, at once, when the scheduler cannot be reached at the first
   * try and the client waits for it (see `timeoutMs`): with its `address`,
   * why (`reason`: `refused`, `getaddrinfo ENOTFOUND host`, `timed out after
   * 30000 ms`, …) and how long the client waits in all (`waitMs`), so that a
   * program can say that it waits. What it throws, or a rejection of the
   * promise it returns, is logged (at warn). Default none;
   * the client logs the wait at info either way.
   */
  onWaiting?: (notice: {
    readonly address: string;
    readonly reason: string;
    readonly waitMs: number;
  }) => void;
  /**
   * Batching interval of the stream to the scheduler, in ms; 0 sends at the
   * next turn. Default 0 for `inproc://`, 2 otherwise.
   */
  batchedSendIntervalMs?: number;
  /**
   * A prefix for the client's id. Default (or null) `client`. `published` is refused: ids
   * starting with `published-` are the scheduler's, for its datasets.
   */
  name?: string | null;
  /** Where to log. Default: a pino logger named `weft.client` at `$WEFT_LOG_LEVEL` or `info`. */
  logger?: Logger;
  /** TCP: messages go in frames of at most this many bytes. Default 64 MiB (see `FrameLimits`). */
  maxFrameBytes?: number;
  /**
   * TCP: the largest message sent to or accepted from the scheduler and the
   * workers, in bytes. Default 4 GiB − 1. A graph too large to send fails
   * its futures with a `MessageTooLargeError`.
   */
  maxMessageBytes?: number;
  /**
   * The cluster's TLS credentials, for a `tls://` scheduler and its workers
   * (see `comm/tls.ts`). Default none.
   */
  tls?: TlsCredentials;
  /**
   * Print what tasks print (`print`, `warn` from `weft`: the events of topics
   * `print` and `warn`) on this process's stdout and stderr, as Dask's clients
   * do. Default true.
   */
  printTaskOutput?: boolean;
  /**
   * Abort the connect: `Client.connect` then rejects at once with the signal's
   * reason, the try in flight ended (a TLS handshake the scheduler never makes,
   * packets dropped: else waited on up to `timeoutMs`), or the handshake after it.
   * For a program stopping meanwhile (a plugin of a scheduler closing: its
   * `closing`). Only the connect: the client once connected is closed by `close()`.
   */
  signal?: AbortSignal;
}

/**
 * A TypeError for the options of `Client.connect` nothing else checks before
 * they are used: a name that is not a string made ids like `5-1a2b3c4d` (a
 * symbol threw a bare TypeError), a logger that is none failed at its first
 * message, an interval that is not a number was refused naming no option, an
 * `onWaiting` that is not a function would throw only once the scheduler
 * could not be reached.
 */
function checkClientOptions(options: ClientOptions): void {
  const { name, logger, batchedSendIntervalMs, onWaiting } = options as Record<string, unknown>;
  // The frame limits' own check shows what it got in a template string: a symbol threw there.
  for (const limit of ["maxFrameBytes", "maxMessageBytes"] as const) {
    const v: unknown = options[limit];
    if (v !== undefined && typeof v !== "number") {
      throw new RangeError(`Client option ${limit} must be an integer, got ${showValue(v)}`);
    }
  }
  // null is the default, as the option's type says (Dask's name=None).
  if (name != null && (typeof name !== "string" || name === "")) {
    throw new TypeError(`Client option name must be a non-empty string, got ${showValue(name)}`);
  }
  if (
    logger !== undefined &&
    !["child", "info", "warn", "error"].every(
      (m) => typeof (logger as Record<string, unknown> | null)?.[m] === "function",
    )
  ) {
    throw new TypeError(`Client option logger must be a pino logger, got ${showValue(logger)}`);
  }
  if (onWaiting !== undefined && typeof onWaiting !== "function") {
    throw new TypeError(`Client option onWaiting must be a function, got ${showValue(onWaiting)}`);
  }
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`Client option signal must be an AbortSignal, got ${showValue(signal)}`);
  }
  if (
    batchedSendIntervalMs !== undefined &&
    !(
      typeof batchedSendIntervalMs === "number" &&
      batchedSendIntervalMs >= 0 &&
      batchedSendIntervalMs <= MAX_TIMER_MS
    )
  ) {
    throw new RangeError(
      `Client option batchedSendIntervalMs must be a number of milliseconds ≥ 0, got ${showValue(batchedSendIntervalMs)}`,
    );
  }
}

/** Every option of {@link ClientOptions}: others are refused. */
const CLIENT_OPTIONS: OptionNames<ClientOptions> = {
  timeoutMs: true,
  onWaiting: true,
  batchedSendIntervalMs: true,
  name: true,
  logger: true,
  maxFrameBytes: true,
  maxMessageBytes: true,
  tls: true,
  printTaskOutput: true,
  signal: true,
};

/**
 * Check the options of `Client.connect` before any is used (a TypeError or
 * RangeError naming the option), and give its timeout, defaulted.
 */
export function connectTimeoutMs(options: ClientOptions): number {
  optionsOf("Client.connect", options);
  checkKnownOptions("Client.connect", options, CLIENT_OPTIONS);
  checkClientOptions(options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!(typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(
      `Client option timeoutMs must be a number > 0 and at most ${MAX_TIMER_MS} (about 24.8 days), got ${showValue(timeoutMs)}`,
    );
  }
  const limitsProblem = frameLimitsProblem(options);
  if (limitsProblem !== null) throw new RangeError(`Client option ${limitsProblem}`);
  const tlsProblem = options.tls === undefined ? null : tlsCredentialsProblem(options.tls);
  if (tlsProblem !== null) throw new TypeError(`Client option ${tlsProblem}`);
  if (options.printTaskOutput !== undefined && typeof options.printTaskOutput !== "boolean") {
    throw new TypeError(
      `Client option printTaskOutput must be true or false, got ${showValue(options.printTaskOutput)}`,
    );
  }
  return timeoutMs;
}

/** A new client's id, `<name>-<8 hex digits>`; a RangeError for a name making the scheduler's. */
export function newClientId(name: string | null | undefined): string {
  const id = `${name ?? "client"}-${randomUUID().slice(0, 8)}`;
  if (isStandInClientId(id)) {
    throw new RangeError(
      `Client option name ${JSON.stringify(name)} makes ids the scheduler keeps for its stand-in clients (published-…)`,
    );
  }
  return id;
}
