/**
 * What `weft scheduler` does once its command line is parsed: scheduler.ts, its definition,
 * imports this module only then, so that `weft scheduler --help` loads none of it.
 */

import type { Command } from "commander";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { splitScheme } from "../../util/address.ts";
import { WORKER_CLOSE_MAX_MS } from "../../util/closeBudget.ts";
import { removeSchedulerFile, writeSchedulerFile } from "../../util/schedulerFile.ts";
import { wallSeconds } from "../../util/wallClock.ts";
import { reachableAddressFor } from "../../worker/contactAddress.ts";
import { warnBareMilliseconds } from "./bareMilliseconds.ts";
import { type CliContext, EXIT, serveDespiteOutputErrors } from "./context.ts";
import { httpUrlShown } from "./httpUrlShown.ts";
import { checkListenAddress } from "./listenAddress.ts";
import { listenFailureMessage } from "./listenFailure.ts";
import { millisecondsOption } from "./millisecondsOption.ts";
import { isNoTimeout } from "./noTimeout.ts";
import { withOptionFlags } from "./optionFlags.ts";
import {
  type FileAddressAnswer,
  notSchedulerFileMessage,
  replacedFileNote,
  schedulerFileTakenMessage,
  schedulerFileText,
  whatAnswersIn,
} from "./schedulerFileTaken.ts";
import type { FrameLimitCliOptions, HttpCliOptions, TlsCliOptions } from "./serverOptions.ts";
import {
  frameLimitsFrom,
  httpFrom,
  logStopSignal,
  positiveDurationMs,
  stderrLogger,
  timeoutMs,
  tlsFrom,
  untilSignal,
} from "./serveUntil.ts";

/** Options of `weft scheduler`. */
export interface SchedulerCliOptions extends FrameLimitCliOptions, TlsCliOptions, HttpCliOptions {
  /** Default: tcp://0.0.0.0:8786, tls://0.0.0.0:8786 with TLS files. */
  readonly listen?: string;
  readonly workerTtl: string;
  /** Default (commander's) 30000. */
  readonly leaseTimeout?: string;
  readonly validate?: boolean;
  readonly logLevel: string;
  /** false with --no-check-worker-address. */
  readonly checkWorkerAddress?: boolean;
  readonly preload?: readonly string[];
  readonly tasks?: readonly string[];
  readonly schedulerFile?: string;
  readonly idleTimeout?: string;
  /** false with --no-work-stealing. */
  readonly workStealing?: boolean;
  /** Default (commander's) 100. */
  readonly workStealingInterval?: string;
  /** false with --no-active-memory-manager. */
  readonly activeMemoryManager?: boolean;
  /** Default (commander's) 2000. */
  readonly activeMemoryManagerInterval?: string;
  /** Default (commander's) {@link WORKER_CLOSE_MAX_MS}. */
  readonly closeWorkerGrace?: string;
}

/**
 * The smallest `--worker-ttl`, in ms: a `weft worker` heartbeats every second, so a
 * shorter TTL removes healthy workers between two heartbeats (300, seconds meant,
 * closed every worker of the cluster within a second).
 */
const MIN_WORKER_TTL_MS = 2_000;

/**
 * `--worker-ttl` in ms; throws a clear error. No timer waits it (the check runs every
 * second), so it may exceed a timer's range.
 */
function workerTtlMs(text: string): number {
  if (isNoTimeout(text)) return Number.POSITIVE_INFINITY;
  const ms = millisecondsOption("--worker-ttl", text, Number.MAX_SAFE_INTEGER);
  if (ms < MIN_WORKER_TTL_MS) {
    throw new Error(
      `--worker-ttl must be at least ${MIN_WORKER_TTL_MS} ms (workers heartbeat every second: a shorter TTL removes healthy ones), got ${text}`,
    );
  }
  return ms;
}

/**
 * The smallest `--lease-timeout`, in ms. Clients refresh their leases every third
 * of it, so an event loop of theirs that stalls a little longer than that (a GC, a
 * large message) loses their locks to others: 30 (Dask's 30s, seconds meant) gave
 * 30 ms, and a client stalling 40 ms now and then lost a lock it held to another.
 */
const MIN_LEASE_TIMEOUT_MS = 1_000;

/**
 * `--lease-timeout` in ms; "inf" never expires leases (the option's `Infinity`,
 * as Dask's leases before it had a timeout, for clients that may sleep holding
 * a lock); throws a clear error. Within a timer's range: past it the Scheduler
 * refused it in its own option's words (`leaseTimeoutMs`), not the command's.
 */
function leaseTimeoutMs(text: string): number {
  if (isNoTimeout(text)) return Number.POSITIVE_INFINITY;
  const ms = timeoutMs("--lease-timeout", text);
  if (ms < MIN_LEASE_TIMEOUT_MS) {
    throw new Error(
      `--lease-timeout must be at least ${MIN_LEASE_TIMEOUT_MS} ms (clients refresh their leases every third of it: a shorter one takes locks from clients busy for a moment; a bare number is milliseconds), got ${text}`,
    );
  }
  return ms;
}

/** `--close-worker-grace` in ms; "inf": until the worker closes its connection. */
function closeWorkerGraceMs(text: string): number {
  return isNoTimeout(text) ? Number.POSITIVE_INFINITY : timeoutMs("--close-worker-grace", text);
}

/**
 * Run a scheduler until `stop` resolves (SIGINT/SIGTERM in production).
 * Prints its address on stdout once listening: on a wildcard host
 * (`0.0.0.0`, `[::]`), one of this machine's that workers elsewhere can use
 * (Dask prints its `get_ip()`), then the listening one. `giveUp` resolving
 * while it starts (a signal) closes it, however long a step of the start
 * takes, and returns once closed, saying nothing.
 */
export async function runScheduler(
  opts: SchedulerCliOptions,
  ctx: CliContext,
  stop: (scheduler: Scheduler) => Promise<unknown>,
  giveUp?: Promise<unknown>,
): Promise<void> {
  let scheduler: Scheduler;
  let gaveUp = false;
  /** The close giving up began, once it did: awaited before returning. */
  let givingUp: Promise<void> | null = null;
  /** Where it listens, once known: a failure there is said of --listen. */
  let listen: string | null = null;
  /** The --scheduler-file as first looked at (null: none there). */
  let seenFile: string | null = null;
  /** What answered at the address the --scheduler-file named, as first looked at. */
  let found: FileAddressAnswer = { kind: "nothing" };
  try {
    const secure = tlsFrom(opts);
    listen =
      opts.listen ?? (secure.tls !== undefined ? "tls://0.0.0.0:8786" : "tcp://0.0.0.0:8786");
    checkListenAddress("--listen", listen);
    // In-process addresses reach nothing outside this process: no worker could join.
    if (splitScheme(listen).scheme === "inproc") {
      throw new Error(
        `--listen ${listen}: workers and clients in other processes need tcp:// (or tls://)`,
      );
    }
    // Before listening: a file left by a scheduler gone may name this very address.
    if (opts.schedulerFile !== undefined) {
      seenFile = await schedulerFileText(opts.schedulerFile);
      const foreign = notSchedulerFileMessage(opts.schedulerFile, seenFile);
      if (foreign !== null) throw new Error(foreign);
      found = await whatAnswersIn(opts.schedulerFile, seenFile, secure.tls);
      const taken = schedulerFileTakenMessage(opts.schedulerFile, found);
      if (taken !== null) throw new Error(taken);
    }
    scheduler = new Scheduler({
      listen,
      validate: opts.validate === true,
      workerTtlMs: workerTtlMs(opts.workerTtl),
      leaseTimeoutMs: leaseTimeoutMs(opts.leaseTimeout ?? "30000"),
      ...(opts.idleTimeout !== undefined && !isNoTimeout(opts.idleTimeout)
        ? { idleTimeoutMs: positiveDurationMs("--idle-timeout", opts.idleTimeout) }
        : {}),
      checkWorkerAddress: opts.checkWorkerAddress !== false,
      workStealing: opts.workStealing !== false,
      workStealingIntervalMs: timeoutMs(
        "--work-stealing-interval",
        opts.workStealingInterval ?? "100",
      ),
      activeMemoryManager: opts.activeMemoryManager !== false,
      activeMemoryManagerIntervalMs: timeoutMs(
        "--active-memory-manager-interval",
        opts.activeMemoryManagerInterval ?? "2000",
      ),
      closeWorkerGraceMs: closeWorkerGraceMs(opts.closeWorkerGrace ?? String(WORKER_CLOSE_MAX_MS)),
      ...frameLimitsFrom(opts),
      ...secure,
      ...httpFrom(opts),
      preload: opts.preload ?? [],
      taskModules: opts.tasks ?? [],
      logger: stderrLogger("weft.scheduler", opts.logLevel),
    });
    // Told to stop (a signal) while starting, a plugin's start or a weftSetup never
    // ending: closed as a running one is, its preloads torn down.
    const starting = scheduler;
    void giveUp?.then(() => {
      gaveUp = true;
      givingUp = starting.close();
    });
    await scheduler.listen();
  } catch (err) {
    if (gaveUp) {
      await givingUp;
      return;
    }
    const message =
      listen === null
        ? (err as Error).message
        : listenFailureMessage(err, {
            listen,
            listenIsDefault: opts.listen === undefined,
            httpAddress: opts.httpAddress,
          });
    ctx.stderr.write(`weft scheduler: cannot start: ${withOptionFlags(message)}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const reachable = reachableAddressFor(scheduler.address);
  const id = scheduler.id;
  if (opts.schedulerFile !== undefined) {
    // Another scheduler started at the same time with the same file (a job script run
    // twice at once: an array job, mpirun -n 2) may have written it while this one
    // started (its preloads, its plugins' starts): the first look saw none. Looked at
    // again only if it changed: one unchanged may name the address this one now listens
    // on (left by a scheduler gone, started again on its fixed port), which would answer.
    const fileNow = await schedulerFileText(opts.schedulerFile);
    if (fileNow !== seenFile) {
      found = await whatAnswersIn(opts.schedulerFile, fileNow, scheduler.options.tls);
    }
    const taken = schedulerFileTakenMessage(opts.schedulerFile, found);
    if (taken !== null) {
      await scheduler.close();
      ctx.stderr.write(`weft scheduler: cannot start: ${taken}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
    const note = replacedFileNote(opts.schedulerFile, found);
    if (note !== null) ctx.stderr.write(`weft scheduler: ${note}\n`);
    try {
      await writeSchedulerFile(opts.schedulerFile, {
        type: "Scheduler",
        id,
        address: reachable ?? scheduler.address,
        services:
          scheduler.httpUrl === null ? {} : { http: Number(new URL(scheduler.httpUrl).port) },
        started: wallSeconds(),
        workers: {},
      });
    } catch (err) {
      await scheduler.close();
      ctx.stderr.write(`weft scheduler: cannot start: ${(err as Error).message}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
  }
  ctx.stdout.write(
    reachable === null
      ? `scheduler at ${scheduler.address}\n`
      : `scheduler at ${reachable} (listening on ${scheduler.address})\n`,
  );
  if (scheduler.httpUrl !== null) ctx.stdout.write(`http at ${httpUrlShown(scheduler.httpUrl)}\n`);
  logStopSignal(scheduler.logger, await stop(scheduler));
  await scheduler.close();
  if (opts.schedulerFile !== undefined) {
    // The scheduler closed: its exit is not failed, but the user must clean up.
    await removeSchedulerFile(opts.schedulerFile, id).catch((err: Error) => {
      ctx.stderr.write(`weft scheduler: ${err.message}\n`);
    });
  }
  if (scheduler.status === "failed") {
    const why = scheduler.fault ?? "its state machine failed";
    ctx.stderr.write(`weft scheduler: stopped: ${why.split("\n")[0]}\n`);
    ctx.exitCode = EXIT.differences;
  }
}

/**
 * `weft scheduler` as `cmd` parsed it into `opts`: the scheduler, until SIGINT
 * or SIGTERM, or until it closes.
 */
export async function runSchedulerCommand(
  opts: SchedulerCliOptions,
  cmd: Command,
  ctx: CliContext,
): Promise<void> {
  serveDespiteOutputErrors("weft scheduler");
  // No round of work stealing runs to be timed: the interval was ignored without a word.
  if (opts.workStealing === false && cmd.getOptionValueSource("workStealingInterval") === "cli") {
    ctx.stderr.write(
      "weft scheduler: cannot start: --work-stealing-interval and --no-work-stealing contradict each other: no round of work stealing runs\n",
    );
    ctx.exitCode = EXIT.usage;
    return;
  }
  // --worker-ttl and --lease-timeout refuse a time under a second, saying why.
  warnBareMilliseconds(ctx.stderr, "scheduler", [["--close-worker-grace", opts.closeWorkerGrace]]);
  // Listened for from the start: a scheduler still starting closes on SIGINT or
  // SIGTERM as a running one does (exit 0), its preloads torn down.
  let finished!: () => void;
  const signalled = untilSignal(
    new Promise<void>((resolve) => {
      finished = resolve;
    }),
  );
  try {
    await runScheduler(opts, ctx, (s) => Promise.race([signalled, s.closed]), signalled);
  } finally {
    finished();
  }
}
