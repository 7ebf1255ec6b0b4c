/**
 * `--scheduler-file` (`weft worker`, and the commands that connect as a client:
 * `weft run`, `weft status`, `weft retire`, …): the scheduler's address, from a
 * file that may not be there yet, or may name a scheduler that is gone. A file
 * a scheduler left behind (SIGKILLed, its machine lost) names an address that
 * refuses connections, until the scheduler started again (perhaps on another
 * host or port) writes its own: so the file is read again before each try
 * while the address it names refuses (or cannot be reached otherwise: a host
 * gone whose name no longer resolves).
 */

import { existsSync } from "node:fs";
import type { Logger } from "pino";
import type { CommOptions } from "../../comm/comm.ts";
import {
  connectFailureReason,
  connectWaiting,
  type WaitedFailure,
} from "../../comm/connectWaiting.ts";
import { ConnectError, isTransientConnectError } from "../../comm/errors.ts";
import { readSchedulerFile } from "../../util/schedulerFile.ts";

/**
 * The addresses the scheduler file at `path` gives, one at each call, for
 * `connectWaiting`. The first call gives `known` if given (the file was read
 * already), else waits for the file to appear, up to `waitMs` (Infinity:
 * until `signal` aborts); later calls read it again, keeping the address last
 * read while the file is missing (removed by a scheduler that closed, until
 * another writes its own). Rejects, saying so, when the file never appears or
 * is not a scheduler file, and with `signal.reason` once `signal` aborts.
 */
export function schedulerFileAddresses(
  path: string,
  o: {
    readonly waitMs: number;
    readonly signal?: AbortSignal;
    /** Told while the file is not there yet: at once, then every `waitingEveryMs` (how long so far). */
    readonly waiting?: (waitedMs: number) => void;
    /** Default 10 s. */
    readonly waitingEveryMs?: number;
    /** The address the file gave when read just before. */
    readonly known?: string;
  },
): () => Promise<string> {
  let last: string | null = o.known ?? null;
  let first = o.known !== undefined;
  return async () => {
    if (first) {
      first = false;
      return last as string;
    }
    if (last === null) {
      const started = performance.now();
      let timer: ReturnType<typeof setInterval> | null = null;
      if (o.waiting !== undefined && !existsSync(path)) {
        const waiting = o.waiting;
        waiting(0);
        timer = setInterval(
          () => waiting(performance.now() - started),
          o.waitingEveryMs ?? FILE_WAIT_LOG_MS,
        );
        timer.unref();
      }
      try {
        last = await readSchedulerFile(path, { timeoutMs: o.waitMs, signal: o.signal });
      } finally {
        if (timer !== null) clearInterval(timer);
      }
      return last;
    }
    o.signal?.throwIfAborted();
    try {
      last = await readSchedulerFile(path, { timeoutMs: 0 });
    } catch (err) {
      // Removed (by a scheduler that closed), perhaps while read: the last address stands.
      if (existsSync(path)) throw err;
    }
    return last;
  };
}

/** How often a wait for a scheduler file not there yet is logged again. */
const FILE_WAIT_LOG_MS = 10_000;

/** Options of {@link liveSchedulerFromFile}. */
export interface SchedulerFileWait {
  /** Each try's timeout, in ms (`--connect-timeout`). */
  readonly connectTimeoutMs: number;
  /**
   * How long to wait in all, for the file and for a scheduler that accepts
   * connections, in ms (`--death-timeout`); null: until `signal` aborts.
   */
  readonly deathTimeoutMs: number | null;
  /** Aborted once the worker is told to stop (a signal, its nanny gone): stop waiting. */
  readonly signal: AbortSignal;
  /** Where the wait is told of: once when it starts, then every 10 s. */
  readonly logger?: Logger;
  /** The TLS credentials of a `tls://` scheduler. */
  readonly comm?: CommOptions;
}

/**
 * The scheduler address in the scheduler file at `path`, once something
 * accepts connections there, waiting as {@link SchedulerFileWait} says. Rejects,
 * saying so, when the file never appears, is not a scheduler file, or its
 * address still refuses, or still cannot be reached (its name not resolving,
 * a network not reachable, tries timed out), at the end (or when stopped).
 * A TLS failure is left to the worker's own connection to report: the
 * address is returned.
 *
 * The connection that accepted is closed, and the worker makes its own: the
 * address must be known before the Worker is made. `weft worker` derives its
 * listen scheme and the contact address it advertises (the interface that
 * routes to the scheduler's host) from it; the pool threads are given it as
 * they start, before registering; and the open connection could not wait for
 * the worker's start (task modules loading in every thread, preloads): the
 * scheduler drops a connection that does not introduce itself within its
 * handshake timeout (10 s).
 */
export async function liveSchedulerFromFile(path: string, o: SchedulerFileWait): Promise<string> {
  const waitMs = o.deathTimeoutMs ?? Number.POSITIVE_INFINITY;
  const addresses = schedulerFileAddresses(path, {
    waitMs,
    signal: o.signal,
    waiting: (waitedMs) =>
      waitedMs === 0
        ? o.logger?.info(
            { schedulerFile: path, waitMs: o.deathTimeoutMs },
            "no scheduler file there yet (is the scheduler started with --scheduler-file, and the path the same?): waiting for it",
          )
        : o.logger?.info(
            { schedulerFile: path, waitedMs, waitMs: o.deathTimeoutMs },
            `still waiting for the scheduler file ${path} (for ${Math.round(waitedMs / 1000)} s)`,
          ),
  });
  return await dialFromFile(path, addresses, {
    connectTimeoutMs: o.connectTimeoutMs,
    waitMs,
    comm: o.comm,
    // Its try in flight ended too: one whose TLS handshake never completes held a
    // worker told to stop until --connect-timeout (30 s).
    signal: o.signal,
    onFirstFailure: ({ address, reason, refused }) =>
      o.logger?.info(
        { scheduler: address, schedulerFile: path, reason, waitMs: o.deathTimeoutMs },
        refused
          ? "the scheduler the scheduler file names refuses connections (gone, or not started yet?): reading the file again until one accepts"
          : `the scheduler the scheduler file names cannot be reached (${reason}): reading the file again until one can`,
      ),
    onStillFailing: ({ address, reason, refused, waitedMs }) =>
      o.logger?.info(
        { scheduler: address, schedulerFile: path, reason, waitedMs, waitMs: o.deathTimeoutMs },
        `still waiting for a scheduler at the address the scheduler file names (${address} ${refused ? "refuses connections" : `cannot be reached: ${reason}`}, for ${Math.round(waitedMs / 1000)} s)`,
      ),
  });
}

/**
 * The address, of those `addresses` gives (the scheduler file at `path` read
 * again before each try), at which something accepts connections within
 * `waitMs`; that connection is closed. Rejects, saying which address the file
 * named last and for how long it was tried, when none did; with the file's own
 * error when it went wrong. A TLS failure is left to the caller's own
 * connection to report: the address is returned.
 */
async function dialFromFile(
  path: string,
  addresses: () => Promise<string>,
  o: {
    readonly connectTimeoutMs: number;
    readonly waitMs: number;
    readonly comm?: CommOptions;
    /** Aborted: stop at once, the try in flight too, rejecting with its reason. */
    readonly signal?: AbortSignal;
    readonly onFirstFailure?: (failure: WaitedFailure) => void;
    readonly onStillFailing?: (failure: WaitedFailure) => void;
  },
): Promise<string> {
  const { waitMs } = o;
  const given = recordedAddresses(addresses, "");
  try {
    const comm = await connectWaiting(given.next, {
      ...o.comm,
      timeoutMs: o.connectTimeoutMs,
      waitMs,
      ...(o.signal !== undefined
        ? { stopped: () => o.signal?.aborted === true, signal: o.signal }
        : {}),
      onFirstFailure: o.onFirstFailure,
      onStillFailing: o.onStillFailing,
    });
    comm.abort();
    return given.dialled;
  } catch (err) {
    // Not an address to go on with: the caller was told to stop.
    o.signal?.throwIfAborted();
    if (given.fileError !== null) throw given.fileError;
    // TLS failures are left to the caller's own connection, which says why as well.
    if (!isTransientConnectError(err)) return given.dialled;
    throw neverReached(path, given.dialled, err, waitMs, o.connectTimeoutMs);
  }
}

/**
 * `addresses` (the scheduler file read again), remembering the address it gave
 * last (`dialled`, `first` before any) and the file's error if reading it threw:
 * a wait that ends unreached names the one, a file gone wrong is reported as itself.
 */
function recordedAddresses(
  addresses: () => Promise<string>,
  first: string,
): { next: () => Promise<string>; dialled: string; fileError: unknown } {
  const given = {
    dialled: first,
    fileError: null as unknown,
    next: async (): Promise<string> => {
      try {
        given.dialled = await addresses();
        return given.dialled;
      } catch (err) {
        given.fileError = err;
        throw err;
      }
    },
  };
  return given;
}

/**
 * The error of a wait for the scheduler the file at `path` names that ended with
 * `err` (transient: refused, not reached), `dialled` the address it named last.
 */
function neverReached(
  path: string,
  dialled: string,
  err: ConnectError,
  waitMs: number,
  connectTimeoutMs: number,
): Error {
  if (err.code === "ECONNREFUSED") {
    return new Error(
      `the scheduler at ${dialled} (named by ${path}) still refuses connections after ${waitMs} ms: is it running, and its file up to date?`,
      { cause: err },
    );
  }
  const last = err.cause instanceof ConnectError ? err.cause : err;
  return new Error(
    `the scheduler at ${dialled} (named by ${path}) still cannot be reached after ${waitMs} ms (${connectFailureReason(last, connectTimeoutMs)}): is it running, and its file up to date?`,
    { cause: err },
  );
}

/**
 * For a command that connects as a client: `connect` to the scheduler at `address`,
 * or, given the scheduler file `path` it was `read` from just before, to the
 * addresses the file names (read again before each later try), each passed to
 * `check` first (a scheme refused, an address given twice: thrown), within
 * `timeoutMs` (the wait a client gives an address it was given). The file is read
 * again while the address it names cannot be reached, as
 * {@link liveSchedulerFromFile} does for a worker: a client started while the file
 * still names a scheduler gone would otherwise wait out its timeout although a new
 * scheduler had written its own address there. The client's own connection is the
 * only one made (a probe before it was a connection more to the scheduler for every
 * command). A wait that ends unreached rejects naming the address the file gave
 * last and the file; a file gone wrong, with its error; anything else (TLS), with
 * the connection's own.
 */
export async function connectThroughSchedulerFile<T>(
  path: string | undefined,
  address: string,
  timeoutMs: number,
  check: (address: string) => void,
  connect: (where: string | (() => Promise<string>)) => Promise<T>,
): Promise<T> {
  if (path === undefined) return await connect(address);
  const given = recordedAddresses(
    schedulerFileAddresses(path, { waitMs: 0, known: address }),
    address,
  );
  try {
    return await connect(async () => {
      const next = await given.next();
      check(next);
      return next;
    });
  } catch (err) {
    if (given.fileError !== null) throw given.fileError;
    if (!isTransientConnectError(err)) throw err;
    throw neverReached(path, given.dialled, err, timeoutMs, timeoutMs);
  }
}
