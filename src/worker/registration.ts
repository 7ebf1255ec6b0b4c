/**
 * A worker's registration with its scheduler: connect (waiting for a scheduler
 * that is not listening yet), send `register-worker` with what the worker
 * offers, and read the answer (asking again while the worker's name is held
 * by one on its way out).
 *
 * Apart from the worker because it is the one handshake before the worker's
 * stream starts, with its own waits and errors; what the answer brings
 * (uploads, modules, plugins) the worker takes itself.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { type Comm, commOptionsOf } from "../comm/comm.ts";
import {
  connectWaiting,
  LAST_TRY_FLOOR_MS,
  STILL_FAILING_EVERY_MS,
  schedulerPendingLine,
  schedulerWaitLine,
} from "../comm/connectWaiting.ts";
import { CommClosedError } from "../comm/errors.ts";
import { plainToTlsHint } from "../comm/plainToTlsHint.ts";
import {
  type RegisterReplyMsg,
  type RegisterWorkerHandshakeMsg,
  receiveLimitOf,
} from "../protocol/messagesSession.ts";
import { wireVersion } from "../protocol/version.ts";
import { newStimulusId as stimulusId } from "../util/stimulusId.ts";
import type { ResolvedWorkerOptions } from "./workerOptions.ts";

/**
 * The reply a scheduler gives to `register-worker`: `{status: "OK"}` or
 * `{status: "error", message}`, with the scheduler's versions (the worker
 * refuses a scheduler of another wire protocol).
 */
export type RegisterWorkerReply = Omit<RegisterReplyMsg, "op"> & {
  readonly op?: "register-worker-reply";
};

/** How long a worker whose name is taken waits before asking to register again. */
const NAME_TAKEN_RETRY_MS = 500;

/** What registering needs of the worker. */
export interface RegistrationHost {
  readonly options: ResolvedWorkerOptions;
  readonly logger: Logger;
  /** The worker's address, as peers and the scheduler know it. */
  readonly address: string;
  /** A connection to the scheduler was made: the worker closes it if it closes meanwhile. */
  connected(comm: Comm): void;
  /** True once the worker is closing: a refused connection is not tried again. */
  closing(): boolean;
  /** Throw if the worker was closed while it waited (before asking again). */
  throwIfClosed(): void;
  /** Aborted when the worker closes: the connect try in flight ends then, not at its timeout. */
  readonly signal: AbortSignal;
  /**
   * When the worker's start began (`Date.now()`), which `deathTimeoutMs`
   * bounds as a whole: the wait for the scheduler ends that long after it.
   * Default: the wait's first try.
   */
  readonly startedAt?: number;
}

/** A worker the scheduler accepted: the connection, and the answer. */
export interface Registered {
  readonly comm: Comm;
  readonly reply: Partial<RegisterWorkerReply>;
}

/**
 * Register with the scheduler. A refusal because another worker has this
 * worker's name (one on its way out: a nanny's worker started again before
 * the scheduler saw the old one go) is asked again, every half second, until
 * `connectTimeoutMs` has passed, or the start's `startTimeoutMs` (the death
 * timeout given) if that comes first. The connection and the scheduler's answer,
 * once it accepts this worker; throws if it refuses.
 */
export async function registerWithScheduler(host: RegistrationHost): Promise<Registered> {
  const o = host.options;
  const firstAsk = Date.now();
  // And the whole start's bound, when given: --death-timeout bounds the start.
  const deadline = Math.min(
    firstAsk + o.connectTimeoutMs,
    o.startTimeoutMs === null
      ? Number.POSITIVE_INFINITY
      : (host.startedAt ?? firstAsk) + o.startTimeoutMs,
  );
  for (let asked = 1; ; asked++) {
    const comm = await connectToScheduler(host);
    host.connected(comm);
    let reply: Partial<RegisterWorkerReply> | null;
    try {
      reply = await askToRegister(host, comm);
    } catch (err) {
      // A peer that did not answer may not close its side either: an orderly close
      // would wait for it, past the timeout just reported.
      comm.abort();
      throw err;
    }
    if (reply?.status === "OK") return { comm, reply };
    const why = typeof reply?.message === "string" ? reply.message : JSON.stringify(reply);
    if (reply?.code !== "name-taken" || Date.now() >= deadline) {
      const tries = asked === 1 ? "" : ` (asked ${asked} times in ${Date.now() - firstAsk} ms)`;
      throw new Error(
        `the scheduler at ${o.scheduler} refused to register this worker: ${why}${tries}`,
      );
    }
    // Said once: the holder may be on its way out, or may be a second worker given the name.
    if (asked === 1) {
      host.logger.info(
        { reason: why, waitMs: o.connectTimeoutMs },
        `the scheduler refused this worker's name for now; asking again every ${NAME_TAKEN_RETRY_MS} ms until it is free`,
      );
    }
    comm.abort();
    await sleep(NAME_TAKEN_RETRY_MS, undefined, { signal: host.signal });
    host.throwIfClosed();
  }
}

/**
 * Connect to the scheduler. One that cannot be reached yet (refusing the
 * connection: not listening yet, started together with its workers; its name
 * not resolving yet; its network not reachable; a try timed out) is tried
 * again, more slowly each time, until `deathTimeoutMs` has passed since the
 * worker's start began (`startedAt`; else the first try), or until the worker
 * is closed, when it is null, as Dask's
 * workers wait for their scheduler on any OSError; each try within
 * `connectTimeoutMs`. The wait is logged, with why, at its start and every
 * 10 s. TLS failures end it at once.
 */
async function connectToScheduler(host: RegistrationHost): Promise<Comm> {
  const o = host.options;
  const waitMs = o.deathTimeoutMs ?? Number.POSITIVE_INFINITY;
  return connectWaiting(o.scheduler, {
    ...commOptionsOf(o),
    timeoutMs: o.connectTimeoutMs,
    waitMs,
    ...(host.startedAt !== undefined ? { startedAt: host.startedAt } : {}),
    stopped: () => host.closing(),
    signal: host.signal,
    onFirstFailure: (failure) =>
      host.logger.info(
        { scheduler: o.scheduler, reason: failure.reason, waitMs: o.deathTimeoutMs },
        schedulerWaitLine(failure),
      ),
    // A try whose packets are dropped ends only at connectTimeoutMs (30 s by default): the
    // start watch leaves this wait to these lines, which must come every 10 s all the same.
    onTryPending: ({ pendingMs }) =>
      host.logger.info(
        { scheduler: o.scheduler, pendingMs, waitMs: o.deathTimeoutMs },
        schedulerPendingLine(o.scheduler, pendingMs),
      ),
    onStillFailing: ({ reason, refused, waitedMs }) =>
      host.logger.info(
        { scheduler: o.scheduler, reason, waitedMs, waitMs: o.deathTimeoutMs },
        `still waiting for the scheduler at ${o.scheduler}, which ${refused ? "refuses connections" : `cannot be reached: ${reason}`} (for ${Math.round(waitedMs / 1000)} s)`,
      ),
  });
}

/** Send `register-worker` on `comm`; the scheduler's answer. */
async function askToRegister(
  host: RegistrationHost,
  comm: Comm,
): Promise<Partial<RegisterWorkerReply> | null> {
  const o = host.options;
  const msg: RegisterWorkerHandshakeMsg = {
    op: "register-worker",
    address: host.address,
    nthreads: o.nthreads,
    resources: o.resources,
    ...(o.memoryLimit !== null ? { memoryLimit: o.memoryLimit } : {}),
    ...(o.nanny ? { nanny: true } : {}),
    ...(o.name !== null ? { name: o.name } : {}),
    stimulusId: stimulusId("worker-connect"),
    // So that the scheduler sends no more than this connection takes (see ReceiveLimit).
    ...receiveLimitOf(comm),
    ...wireVersion(),
  };
  await comm.send(msg);
  // Waited for as a scheduler not reachable yet is: until deathTimeoutMs (by default
  // connectTimeoutMs), or as long as it takes when that is null (`weft worker`'s default),
  // as Dask's worker reads its registration's answer without a timeout. A scheduler that
  // accepted the connection but does not answer is frozen or stalled (SIGSTOP, a paused
  // VM, a long GC), or is not a weft scheduler: before, a `weft worker` started during a
  // pause of 30 s or more ended with exit 2 however long it had been told to wait.
  const waitMs = answerWaitMs(o.deathTimeoutMs, host.startedAt);
  // Cancelled once the answer came: a pending timer held this function's context
  // (the host: the worker, its state and logs) until it fired, so that a worker
  // closed within deathTimeoutMs of its start (scaled down, restarted) stayed in memory.
  const answered = new AbortController();
  const timeout = Number.isFinite(waitMs)
    ? sleep(waitMs, null, { ref: false, signal: answered.signal }).then(() => {
        throw new Error(
          `the scheduler at ${o.scheduler} did not answer register-worker within ${waitMs} ms${waitMs < (o.deathTimeoutMs ?? 0) ? ` (what was left of deathTimeoutMs, ${o.deathTimeoutMs} ms, from the start)` : ""}`,
        );
      })
    : new Promise<never>(() => {});
  const sentAt = Date.now();
  const everyMs = Math.min(o.connectTimeoutMs, STILL_FAILING_EVERY_MS);
  // Not for a wait no longer than one interval: its error would follow the line at once.
  const unanswered =
    waitMs > everyMs
      ? setInterval(() => {
          host.logger.info(
            { scheduler: o.scheduler, waitedMs: Date.now() - sentAt, waitMs: o.deathTimeoutMs },
            `still waiting for the scheduler at ${o.scheduler} to answer register-worker (for ${Math.round((Date.now() - sentAt) / 1000)} s): it accepted the connection but says nothing (frozen or stalled, or not a weft scheduler)`,
          );
        }, everyMs)
      : undefined;
  unanswered?.unref();
  const answer = comm.recv().catch((err: unknown) => {
    if (!(err instanceof CommClosedError)) throw err;
    throw new Error(
      `the scheduler at ${o.scheduler} closed the connection instead of answering register-worker (${err.message}): its log says why; a --max-message-bytes or --max-frame-bytes lower there than this worker's message is one cause, the address of a worker rather than a scheduler another${
        plainToTlsHint(o.scheduler) === "" ? "" : `, ${plainToTlsHint(o.scheduler)} a third`
      }`,
      { cause: err },
    );
  });
  try {
    const reply = (await Promise.race([answer, timeout])) as Partial<RegisterWorkerReply> | null;
    return typeof reply === "object" ? reply : null;
  } finally {
    clearInterval(unanswered);
    answered.abort();
  }
}

/**
 * How long to wait for the answer to `register-worker`: `deathTimeoutMs` (null:
 * as long as it takes), but, when it bounds the whole start (`startedAt`
 * given), only what is left of it, as the wait for a scheduler not reachable
 * yet, and at least {@link LAST_TRY_FLOOR_MS}. From the send instead, a
 * scheduler refusing connections most of that time and then frozen had the
 * worker wait up to twice its death timeout before it failed.
 */
function answerWaitMs(deathTimeoutMs: number | null, startedAt: number | undefined): number {
  if (deathTimeoutMs === null) return Number.POSITIVE_INFINITY;
  if (startedAt === undefined) return deathTimeoutMs;
  const left = startedAt + deathTimeoutMs - Date.now();
  return Math.min(deathTimeoutMs, Math.max(LAST_TRY_FLOOR_MS, left));
}
