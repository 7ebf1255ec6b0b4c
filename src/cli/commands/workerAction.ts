/**
 * What `weft worker` does once its command line is parsed: worker.ts, its definition,
 * imports this module only then, so that `weft worker --help` loads none of it.
 */

import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { splitScheme } from "../../util/address.ts";
import { parseDecimal } from "../../util/decimal.ts";
import { ipcNannyLink } from "../../worker/nannyLink.ts";
import { Worker } from "../../worker/worker.ts";
import type { WorkerOptions } from "../../worker/workerOptions.ts";
import { warnBareMilliseconds } from "./bareMilliseconds.ts";
import { workerAddresses } from "./contactAddress.ts";
import { contactHostWarning } from "./contactHost.ts";
import { type CliContext, EXIT, serveDespiteOutputErrors } from "./context.ts";
import { httpUrlShown } from "./httpUrlShown.ts";
import { checkInprocScheduler } from "./inprocScheduler.ts";
import { checkListenAddress } from "./listenAddress.ts";
import { listenFailureMessage } from "./listenFailure.ts";
import { liveSchedulerFromFile } from "./liveSchedulerFile.ts";
import { memoryLimitOption, noMemoryLimit } from "./memoryLimitOption.ts";
import {
  EXIT_RESTART,
  EXIT_SIGTERM,
  givenArgs,
  nannyGone,
  nannyPid,
  runNanny,
  underNanny,
} from "./nanny.ts";
import {
  exitOnceClosed,
  NANNY_GONE_CLOSE_TIMEOUT_S,
  NANNY_GONE_EXIT_MS,
  watchNanny,
} from "./nannyChildExit.ts";
import { isNoTimeout } from "./noTimeout.ts";
import { withOptionFlags } from "./optionFlags.ts";
import { schedulerChoiceProblem } from "./schedulerChoice.ts";
import type { FrameLimitCliOptions, HttpCliOptions, TlsCliOptions } from "./serverOptions.ts";
import {
  durationMs,
  frameLimitsFrom,
  httpFrom,
  logStopSignal,
  MAX_POOL_THREADS,
  nonNegativeInt,
  parseResources,
  positiveDurationMs,
  positiveInt,
  requireTlsScheme,
  stderrLogger,
  timeoutMs,
  tlsFrom,
  untilSignal,
} from "./serveUntil.ts";

/** Options of `weft worker`. */
export interface WorkerCliOptions extends FrameLimitCliOptions, TlsCliOptions, HttpCliOptions {
  readonly nthreads?: string;
  readonly tasks: readonly string[];
  /** Default: every interface, any port, on the scheduler's scheme (tcp or tls). */
  readonly listen?: string;
  readonly contactAddress?: string;
  readonly executor: "threads" | "inline";
  readonly resources?: string;
  readonly memoryLimit?: string;
  readonly memoryTarget?: string;
  readonly spillDirectory?: string;
  /** Default `process`: a `weft worker` has its process to itself. */
  readonly memoryMeasure?: "process" | "managed";
  readonly memorySpill?: string;
  readonly memoryPause?: string;
  readonly memoryTerminate?: string;
  readonly validate?: boolean;
  readonly nanny?: boolean;
  readonly allowUploads?: boolean;
  readonly maxRestarts?: string;
  readonly logLevel: string;
  readonly connectTimeout: string;
  /** Default: none, wait for the scheduler until stopped. */
  readonly deathTimeout?: string;
  readonly preload?: readonly string[];
  readonly schedulerFile?: string;
  readonly name?: string;
  readonly lifetime?: string;
  readonly lifetimeStagger?: string;
  readonly lifetimeRestart?: boolean;
}

/** The lifetime options: Worker options, checked. */
function lifetimeFrom(opts: WorkerCliOptions): Partial<WorkerOptions> {
  if (opts.lifetime === undefined || isNoTimeout(opts.lifetime)) {
    if (opts.lifetimeStagger !== undefined || opts.lifetimeRestart === true) {
      throw new Error(
        `--lifetime-stagger and --lifetime-restart need --lifetime${opts.lifetime === undefined ? "" : " other than inf"}`,
      );
    }
    return {};
  }
  if (opts.lifetimeRestart === true && !underNanny()) {
    throw new Error("--lifetime-restart needs --nanny: nothing would start the worker again");
  }
  const lifetimeMs = positiveDurationMs("--lifetime", opts.lifetime);
  const staggerMs =
    opts.lifetimeStagger === undefined ? 0 : durationMs("--lifetime-stagger", opts.lifetimeStagger);
  // The Worker refuses it too, but in its own options' words (lifetimeStaggerMs).
  if (staggerMs > lifetimeMs) {
    throw new Error(
      `--lifetime-stagger (${opts.lifetimeStagger}) must be at most --lifetime (${opts.lifetime}): the worker's lifetime is --lifetime give or take it`,
    );
  }
  return {
    lifetimeMs,
    ...(opts.lifetimeStagger !== undefined ? { lifetimeStaggerMs: staggerMs } : {}),
    lifetimeRestart: opts.lifetimeRestart === true,
  };
}

/** `--death-timeout` in ms, or null (wait until stopped) when not given or inf; throws a clear error. */
function deathTimeoutFrom(opts: WorkerCliOptions): number | null {
  return opts.deathTimeout === undefined || isNoTimeout(opts.deathTimeout)
    ? null
    : timeoutMs("--death-timeout", opts.deathTimeout);
}

/** A number in (0, 1] given as text; throws a clear error. */
function fractionOption(name: string, text: string): number {
  const n = parseDecimal(text);
  if (!(n > 0 && n <= 1)) throw new Error(`${name} must be a number in (0, 1], got ${text}`);
  return n;
}

/** A number in (0, 1], or `off` (false), given as text; throws a clear error. */
function thresholdOption(name: string, text: string): number | false {
  if (text === "off") return false;
  const n = parseDecimal(text);
  if (!(n > 0 && n <= 1)) throw new Error(`${name} must be a number in (0, 1] or off, got ${text}`);
  return n;
}

/**
 * Why the memory options given cannot be, or null: without `--memory-limit` (or with
 * Dask's `0`, no limit) the worker neither spills, pauses nor terminates, and they were
 * ignored without a word
 * (`--memory-terminate 0.9` protected nothing). `measureGiven`: `--memory-measure` was
 * given (it has a default, so only the command knows).
 */
function memoryOptionsProblem(opts: WorkerCliOptions, measureGiven: boolean): string | null {
  if (!noMemoryLimit(opts.memoryLimit)) return null;
  const given = [
    ["--memory-target", opts.memoryTarget],
    ["--spill-directory", opts.spillDirectory],
    ["--memory-spill", opts.memorySpill],
    ["--memory-pause", opts.memoryPause],
    ["--memory-terminate", opts.memoryTerminate],
    ["--memory-measure", measureGiven ? opts.memoryMeasure : undefined],
  ].flatMap(([flag, value]) => (value === undefined ? [] : [flag]));
  if (given.length === 0) return null;
  return `${given.join(", ")} ${given.length === 1 ? "applies" : "apply"} with --memory-limit only: without a memory budget nothing is spilled, paused or terminated`;
}

/**
 * Run a worker for the scheduler at `scheduler` until `stop` resolves
 * (SIGINT/SIGTERM, or the worker closing, in production).
 */
export async function runWorker(
  scheduler: string,
  opts: WorkerCliOptions,
  ctx: CliContext,
  stop: (worker: Worker) => Promise<unknown>,
  giveUp?: Promise<unknown>,
  closeTimeout: () => number | undefined = () => undefined,
): Promise<void> {
  let worker: Worker;
  let nthreads: number;
  let gaveUp = false;
  /** What `giveUp` resolved with: the signal's name, when a signal. */
  let gaveUpBy: unknown = null;
  /** The worker's close when told to give up while it starts: awaited before returning. */
  let givingUp: Promise<unknown> | null = null;
  /** Where it listens, once known: a failure there is said of --listen. */
  let listenAt: string | null = null;
  try {
    nthreads = positiveInt("--nthreads", opts.nthreads ?? String(availableParallelism()));
    if (opts.executor !== "inline" && nthreads > MAX_POOL_THREADS) {
      throw new Error(
        `--nthreads must be at most ${MAX_POOL_THREADS} (each thread is a V8 isolate, all started at once; --executor inline starts none), got ${opts.nthreads}`,
      );
    }
    const connectTimeoutMs = timeoutMs("--connect-timeout", opts.connectTimeout);
    const deathTimeoutMs = deathTimeoutFrom(opts);
    const resources = opts.resources === undefined ? {} : parseResources(opts.resources);
    const secure = tlsFrom(opts);
    requireTlsScheme(scheduler, secure);
    checkInprocScheduler(scheduler);
    // A worker of a tls:// cluster serves its peers over TLS too: on tcp:// anyone could
    // fetch its results or run code there without a certificate.
    listenAt =
      opts.listen ??
      (splitScheme(scheduler).scheme === "tls" ? "tls://0.0.0.0:0" : "tcp://0.0.0.0:0");
    checkListenAddress("--listen", listenAt);
    // In-process addresses reach nothing outside this process, and the scheduler, its
    // clients and the other workers are all outside it: registered, the worker would be
    // listed as running while every fetch from it failed.
    for (const [flag, address] of [
      ["--listen", listenAt],
      ["--contact-address", opts.contactAddress],
    ] as const) {
      if (address !== undefined && splitScheme(address).scheme === "inproc") {
        throw new Error(
          `${flag} ${address}: the scheduler, clients and other workers are in other processes: give tcp:// (or tls://)`,
        );
      }
    }
    const memoryProblem = memoryOptionsProblem(opts, false);
    if (memoryProblem !== null) throw new Error(memoryProblem);
    const { listen, contact } = await workerAddresses(listenAt, scheduler);
    worker = new Worker({
      scheduler,
      listen,
      ...(opts.contactAddress !== undefined || contact !== null
        ? { contactAddress: opts.contactAddress ?? contact ?? undefined }
        : {}),
      nthreads,
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      executor: opts.executor === "inline" ? "inline" : "piscina",
      taskModules: opts.tasks,
      resources,
      ...(opts.memoryLimit !== undefined
        ? {
            memoryLimit: memoryLimitOption(opts.memoryLimit),
          }
        : {}),
      ...(opts.memoryTarget !== undefined
        ? { memoryTarget: fractionOption("--memory-target", opts.memoryTarget) }
        : {}),
      ...(opts.spillDirectory !== undefined ? { spillDirectory: opts.spillDirectory } : {}),
      memoryMeasure: opts.memoryMeasure ?? "process",
      ...(opts.memorySpill !== undefined
        ? { memorySpill: thresholdOption("--memory-spill", opts.memorySpill) }
        : {}),
      ...(opts.memoryPause !== undefined
        ? { memoryPause: thresholdOption("--memory-pause", opts.memoryPause) }
        : {}),
      ...(opts.memoryTerminate !== undefined
        ? { memoryTerminate: thresholdOption("--memory-terminate", opts.memoryTerminate) }
        : {}),
      ...frameLimitsFrom(opts),
      ...secure,
      ...httpFrom(opts),
      ...lifetimeFrom(opts),
      preload: opts.preload ?? [],
      validate: opts.validate === true,
      nanny: underNanny(),
      nannyLink: underNanny() ? ipcNannyLink() : null,
      acceptUploads: opts.allowUploads === true,
      connectTimeoutMs,
      deathTimeoutMs,
      logger: stderrLogger("weft.worker", opts.logLevel),
    });
    // Told to give up (a signal, its nanny gone) while starting, as while waiting for a
    // scheduler that is not there: stop now rather than at --death-timeout.
    const starting = worker;
    void giveUp?.then((by) => {
      gaveUp = true;
      gaveUpBy = by;
      // Stopped by a signal (or its nanny gone), not closing on its own: under a nanny
      // only another's SIGTERM gets here unasked for, an exit the nanny starts another
      // worker on (EXIT_SIGTERM), also when it must SIGKILL a close that never ends.
      // Told before the close tells its own, it is what the nanny goes by.
      if (!["closing", "closed", "failed"].includes(starting.status)) {
        starting.options.nannyLink?.closing?.({ restart: false, fault: true });
      }
      givingUp = starting.close(closeTimeout());
      return givingUp;
    });
    // Once the Worker took the option (a literal wildcard refused there), beside the start:
    // the lookup runs in a child process (0.1–0.2 s) the start need not wait for. A stop
    // or a failed start abandons it (its 2 s bound not waited for), its child killed.
    const stopLookup = new AbortController();
    void giveUp?.then(() => stopLookup.abort());
    const warned =
      opts.contactAddress === undefined
        ? Promise.resolve()
        : contactHostWarning(opts.contactAddress, undefined, stopLookup.signal).then((warning) => {
            if (warning !== null && !gaveUp) ctx.stderr.write(`weft worker: ${warning}\n`);
          });
    try {
      await worker.start();
    } catch (err) {
      stopLookup.abort();
      throw err;
    }
    await warned;
    if (gaveUp) {
      // Started, then stopped while the lookup ran: said as a running worker's stop.
      logStopSignal(worker.logger, gaveUpBy);
      await givingUp;
      return;
    }
  } catch (err) {
    if (gaveUp) {
      // The start ends at once, the close it cut short may still be tearing down.
      await givingUp;
      return; // said why already
    }
    // The start deadline's error names the API option; a command-line user gave the flag.
    const message =
      listenAt === null
        ? (err as Error).message
        : listenFailureMessage(err, {
            listen: listenAt,
            listenIsDefault: opts.listen === undefined,
            httpAddress: opts.httpAddress,
          });
    const why = withOptionFlags(message.replace("(deathTimeoutMs, ", "(--death-timeout, "));
    ctx.stderr.write(`weft worker: cannot start: ${why}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  ctx.stdout.write(
    `worker at ${worker.address} (${nthreads} thread${nthreads === 1 ? "" : "s"}) for ${scheduler}\n`,
  );
  if (worker.httpUrl !== null) ctx.stdout.write(`http at ${httpUrlShown(worker.httpUrl)}\n`);
  const stoppedBy = await stop(worker);
  logStopSignal(worker.logger, stoppedBy);
  await worker.close(closeTimeout());
  const signalled = typeof stoppedBy === "string" && stoppedBy.startsWith("SIG");
  if (worker.fault !== null && signalled && !worker.options.nanny) {
    // Stopped while it closed on a fault it met just before (its scheduler gone with it,
    // as at the end of a batch job): a stopped process exits 0, as a nanny does, not 0
    // or 1 as the signal or the fault came first; a supervisor that stopped it (systemd)
    // would take 1 for a failure. Under a nanny the fault is the nanny's to judge.
    ctx.stderr.write(
      `weft worker: stopped by ${stoppedBy} while closing on a fault: ${worker.fault.split("\n")[0]}\n`,
    );
  } else if (worker.fault !== null) {
    ctx.stderr.write(`weft worker: stopped: ${worker.fault.split("\n")[0]}\n`);
    ctx.exitCode = EXIT.differences;
  } else if (worker.restartRequested) {
    if (worker.options.nanny) {
      ctx.exitCode = EXIT_RESTART;
    } else {
      ctx.stderr.write(
        "weft worker: closed: the cluster restarted, and this worker has no nanny to start it again (run it with --nanny)\n",
      );
    }
  }
}

/**
 * The address of the scheduler `--scheduler-file` names, once one accepts
 * connections there (see liveSchedulerFile.ts); null when it cannot be found,
 * said on `ctx` (exit 2), or when the worker was told to stop (`signal`)
 * meanwhile (exit 0).
 */
async function schedulerFromFile(
  opts: WorkerCliOptions,
  ctx: CliContext,
  signal: AbortSignal,
): Promise<string | null> {
  try {
    return await liveSchedulerFromFile(opts.schedulerFile as string, {
      connectTimeoutMs: timeoutMs("--connect-timeout", opts.connectTimeout),
      deathTimeoutMs: deathTimeoutFrom(opts),
      signal,
      logger: stderrLogger("weft.worker", opts.logLevel),
      comm: tlsFrom(opts),
    });
  } catch (err) {
    if (signal.aborted) return null;
    ctx.stderr.write(`weft worker: cannot start: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return null;
  }
}

/**
 * `weft worker [SCHEDULER]` as `cmd` parsed it into `given` and `opts`: under a
 * nanny (`--nanny`), or the worker itself until it is stopped or closes.
 */
export async function runWorkerCommand(
  given: string | undefined,
  opts: WorkerCliOptions,
  cmd: Command,
  ctx: CliContext,
): Promise<void> {
  serveDespiteOutputErrors("weft worker");
  const unnamed = schedulerChoiceProblem(given, opts.schedulerFile);
  if (unnamed !== null) {
    ctx.stderr.write(`weft worker: cannot start: ${unnamed}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  // --memory-measure has a default: whether it was given is known here, not in runWorker.
  const memoryProblem = memoryOptionsProblem(
    opts,
    cmd.getOptionValueSource("memoryMeasure") === "cli",
  );
  if (memoryProblem !== null) {
    ctx.stderr.write(`weft worker: cannot start: ${memoryProblem}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  // Without --nanny there is nothing to restart: a --max-restarts given, even a bad
  // one, was ignored without a word.
  if (opts.nanny !== true && cmd.getOptionValueSource("maxRestarts") === "cli") {
    ctx.stderr.write(
      "weft worker: cannot start: --max-restarts applies with --nanny only (without a nanny nothing starts the worker again)\n",
    );
    ctx.exitCode = EXIT.usage;
    return;
  }
  // Said once: by the nanny, not by each worker it starts with the same options.
  if (nannyPid() === null) {
    warnBareMilliseconds(ctx.stderr, "worker", [
      ["--death-timeout", opts.deathTimeout],
      ["--connect-timeout", opts.connectTimeout],
    ]);
  }
  if (opts.nanny === true) {
    let maxRestarts: number;
    try {
      maxRestarts = nonNegativeInt("--max-restarts", opts.maxRestarts ?? "5");
    } catch (err) {
      ctx.stderr.write(`weft worker: cannot start: ${(err as Error).message}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
    // The child reads the scheduler file itself, each time: a scheduler started
    // again elsewhere is found.
    const args = givenArgs(cmd, given === undefined ? [] : [given], ["--nanny", "--max-restarts"]);
    await runNanny({ args, maxRestarts, stop: untilSignal(), taskModules: opts.tasks }, ctx);
    return;
  }
  // Nobody waits for a worker whose nanny is gone: its close is brief, and its process
  // killed past a bound even while a task blocks the event loop (see nannyChildExit.ts).
  const nanny = nannyPid();
  const unwatch =
    nanny !== null
      ? watchNanny(nanny, (err) =>
          ctx.stderr.write(
            `weft worker: cannot watch its nanny from a thread (${err.message}): a task that blocks the event loop would keep it alive past its nanny\n`,
          ),
        )
      : () => {};
  let closeTimeout: number | undefined;
  const orphaned = nannyGone().then(() => {
    closeTimeout = NANNY_GONE_CLOSE_TIMEOUT_S;
    ctx.stderr.write(
      `weft worker: its nanny is gone; closing (its process ends within ${NANNY_GONE_EXIT_MS / 1000} s)\n`,
    );
  });
  // Listened for from the start: a worker still waiting for its scheduler (or its
  // scheduler file) closes on SIGINT or SIGTERM as a running one does (exit 0),
  // instead of dying of it (130, 143).
  let finished!: () => void;
  // Under a nanny, the nanny's SIGTERM alone stops the worker: a Ctrl-C reaches
  // both (the whole process group), and the nanny's SIGTERM coming after it
  // would kill the worker mid-close (bin/weft.js ignores SIGINT there, from
  // the start); a second SIGTERM (systemd's to the whole group, then the
  // nanny's) is ignored while it closes.
  const nannied = underNanny();
  const signalled = untilSignal(
    new Promise<void>((resolve) => {
      finished = resolve;
    }),
    nannied ? ["SIGTERM"] : undefined,
    nannied,
  );
  let signal: string | null = null;
  void signalled.then((s) => {
    signal = s;
  });
  const giveUp = Promise.race([orphaned, signalled]);
  const givenUp = new AbortController();
  void giveUp.then(() => givenUp.abort());
  try {
    const scheduler = given ?? (await schedulerFromFile(opts, ctx, givenUp.signal));
    if (scheduler === null) return;
    await runWorker(
      scheduler,
      opts,
      ctx,
      (w) => Promise.race([giveUp, w.closed]),
      giveUp,
      () => closeTimeout,
    );
  } finally {
    finished();
    // A worker process that closed exits, whatever its tasks left running: its nanny waits
    // for the exit to start the next one, or is gone. The watch then has nothing to do.
    if (nannied) {
      unwatch();
      exitOnceClosed();
    }
  }
  // The nanny tells its own SIGTERM from another's by whether it sent one.
  if (nannied && signal !== null && (ctx.exitCode ?? 0) === 0) ctx.exitCode = EXIT_SIGTERM;
}
