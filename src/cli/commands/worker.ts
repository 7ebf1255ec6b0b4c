import { availableParallelism } from "node:os";
import { Command, Option } from "commander";
import { splitScheme } from "../../util/address.ts";
import { parseDecimal } from "../../util/decimal.ts";
import { ipcNannyLink } from "../../worker/nannyLink.ts";
import { Worker } from "../../worker/worker.ts";
import type { WorkerOptions } from "../../worker/workerOptions.ts";
import { CHILD_STOP_GRACE_MS } from "./childStop.ts";
import { workerAddresses } from "./contactAddress.ts";
import { type CliContext, EXIT } from "./context.ts";
import { checkListenAddress } from "./listenAddress.ts";
import { liveSchedulerFromFile } from "./liveSchedulerFile.ts";
import { EXIT_RESTART, EXIT_SIGTERM, givenArgs, nannyGone, runNanny, underNanny } from "./nanny.ts";
import { schedulerChoiceProblem } from "./schedulerChoice.ts";
import {
  addFrameLimitOptions,
  addHttpOptions,
  addPreloadOption,
  addTlsOptions,
  type FrameLimitCliOptions,
  type HttpCliOptions,
  LOG_LEVELS,
  type TlsCliOptions,
} from "./serverOptions.ts";
import {
  byteSize,
  durationMs,
  frameLimitsFrom,
  httpFrom,
  MAX_POOL_THREADS,
  nonNegativeInt,
  parseResources,
  positiveInt,
  requireTlsScheme,
  stderrLogger,
  timeoutMs,
  tlsFrom,
  untilSignal,
} from "./serveUntil.ts";

/** Options of `weft worker`. */
interface WorkerCliOptions extends FrameLimitCliOptions, TlsCliOptions, HttpCliOptions {
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
  if (opts.lifetime === undefined) {
    if (opts.lifetimeStagger !== undefined || opts.lifetimeRestart === true) {
      throw new Error("--lifetime-stagger and --lifetime-restart need --lifetime");
    }
    return {};
  }
  if (opts.lifetimeRestart === true && !underNanny()) {
    throw new Error("--lifetime-restart needs --nanny: nothing would start the worker again");
  }
  return {
    lifetimeMs: durationMs("--lifetime", opts.lifetime),
    ...(opts.lifetimeStagger !== undefined
      ? { lifetimeStaggerMs: durationMs("--lifetime-stagger", opts.lifetimeStagger) }
      : {}),
    lifetimeRestart: opts.lifetimeRestart === true,
  };
}

/** `--death-timeout` in ms, or null (wait until stopped) when not given; throws a clear error. */
function deathTimeoutFrom(opts: WorkerCliOptions): number | null {
  return opts.deathTimeout === undefined ? null : timeoutMs("--death-timeout", opts.deathTimeout);
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
 * Why the memory options given cannot be, or null: without `--memory-limit` the worker
 * neither spills, pauses nor terminates, and they were ignored without a word
 * (`--memory-terminate 0.9` protected nothing). `measureGiven`: `--memory-measure` was
 * given (it has a default, so only the command knows).
 */
function memoryOptionsProblem(opts: WorkerCliOptions, measureGiven: boolean): string | null {
  if (opts.memoryLimit !== undefined) return null;
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
): Promise<void> {
  let worker: Worker;
  let nthreads: number;
  let gaveUp = false;
  /** The worker's close when told to give up while it starts: awaited before returning. */
  let givingUp: Promise<unknown> | null = null;
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
    // A worker of a tls:// cluster serves its peers over TLS too: on tcp:// anyone could
    // fetch its results or run code there without a certificate.
    const listenAt =
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
            memoryLimit:
              opts.memoryLimit === "auto" ? "auto" : byteSize("--memory-limit", opts.memoryLimit),
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
    void giveUp?.then(() => {
      gaveUp = true;
      // Stopped by a signal (or its nanny gone), not closing on its own: under a nanny
      // only another's SIGTERM gets here unasked for, an exit the nanny starts another
      // worker on (EXIT_SIGTERM), also when it must SIGKILL a close that never ends.
      // Told before the close tells its own, it is what the nanny goes by.
      if (!["closing", "closed", "failed"].includes(starting.status)) {
        starting.options.nannyLink?.closing?.({ restart: false, fault: true });
      }
      givingUp = starting.close();
      return givingUp;
    });
    await worker.start();
  } catch (err) {
    if (gaveUp) {
      // The start ends at once, the close it cut short may still be tearing down.
      await givingUp;
      return; // said why already
    }
    // The start deadline's error names the API option; a command-line user gave the flag.
    const why = (err as Error).message.replace("(deathTimeoutMs, ", "(--death-timeout, ");
    ctx.stderr.write(`weft worker: cannot start: ${why}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  ctx.stdout.write(
    `worker at ${worker.address} (${nthreads} thread${nthreads === 1 ? "" : "s"}) for ${scheduler}\n`,
  );
  if (worker.httpUrl !== null) ctx.stdout.write(`http at ${worker.httpUrl}\n`);
  await stop(worker);
  await worker.close();
  if (worker.fault !== null) {
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

/** `weft worker`: see docs/client.md. */
export function workerCommand(ctx: CliContext): Command {
  const cmd = new Command("worker")
    .description("Run a worker for a scheduler (TCP mode, many machines)")
    .argument(
      "[scheduler]",
      "the scheduler's address, e.g. tcp://10.0.0.1:8786 (or give --scheduler-file)",
    )
    .option(
      "--scheduler-file <path>",
      "read the scheduler's address from this file (weft scheduler --scheduler-file), waiting for it to appear, and reading it again while the address there cannot be reached (a scheduler gone, until one started again writes its own)",
    )
    .option(
      "--nthreads <n>",
      "tasks computed at once (default: the CPU count, as a Worker's); at most 1024 threads",
    )
    .option(
      "--name <name>",
      "a name of its own, unique in the cluster: workers= restrictions, weft retire and clients may give it in place of its address",
    )
    .option(
      "--tasks <module>",
      "a task module (defineTask) every thread loads; repeat for more",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--listen <address>",
      "where peers and clients reach this worker (default: tcp://0.0.0.0:0, or tls://0.0.0.0:0 for a tls:// scheduler)",
    )
    .option("--contact-address <address>", "the address to advertise, if not the listening one")
    .addOption(
      new Option("--executor <kind>", "run tasks on a thread pool or the main thread")
        .choices(["threads", "inline"])
        .default("threads"),
    )
    .option("--resources <list>", "abstract resources this worker has, e.g. GPU=1,MEM=8e9")
    .option(
      "--memory-limit <size>",
      "the worker's memory budget, e.g. 4GiB, or auto (the machine's memory times the worker's share of the CPUs, as Dask's default): it spills, pauses and closes at shares of it (default: none)",
    )
    .option(
      "--memory-target <fraction>",
      "the share of --memory-limit kept in memory (default: 0.6)",
    )
    .option(
      "--spill-directory <dir>",
      "where spilled values go (default: the system's temporary directory)",
    )
    .addOption(
      new Option(
        "--memory-measure <what>",
        "what is held against --memory-limit: the process's resident memory, or the task values held",
      )
        .choices(["process", "managed"])
        .default("process"),
    )
    .option(
      "--memory-spill <fraction>",
      "process measure: beyond this share of --memory-limit, spill values until back at --memory-target (default: 0.7; off: never)",
    )
    .option(
      "--memory-pause <fraction>",
      "beyond this share of --memory-limit, start no task and fetch no input until back within it (default: 0.8; off: never)",
    )
    .option(
      "--memory-terminate <fraction>",
      "beyond this share of --memory-limit, close (exit 1), losing the results held (default: 0.95; off: never)",
    )
    .option("--validate", "check the state machine after every stimulus (slow)")
    .option(
      "--nanny",
      "run the worker in a child process, started again when it stops on a fault, is killed or SIGTERMed by another, or the scheduler restarts it (as Dask's nanny)",
    )
    .option(
      "--allow-uploads",
      "save and import the files clients upload (client.uploadFile, weft upload): any client that reaches the scheduler then runs code of its choosing here",
    )
    .option(
      "--max-restarts <n>",
      "with --nanny: restarts in a row (a minute of running resets the count) before giving up",
      "5",
    )
    .option(
      "--lifetime <duration>",
      "retire after this long (e.g. 1h, 30m): the results only this worker holds are copied to others, then it closes (default: never)",
    )
    .option(
      "--lifetime-stagger <duration>",
      "with --lifetime: off by up to this much either way, at random, so that workers started together leave apart (default: 0)",
    )
    .option(
      "--lifetime-restart",
      "with --lifetime and --nanny: the nanny starts a new worker once the lifetime is over",
    )
    .option(
      "--connect-timeout <ms>",
      "how long each try to connect to the scheduler (and to peers) may take, and how long a --name another worker holds is asked for again before giving up (exit 2)",
      "30000",
    )
    .option(
      "--death-timeout <ms>",
      "how long the worker's start may take, the wait for a scheduler that refuses connections or cannot be reached yet included, then give up, exit 2, saying what it was doing; with --scheduler-file, the wait for the file has a bound of its own as long, before the start's (default: no bound, until stopped, as Dask's)",
    );
  return addHttpOptions(addTlsOptions(addFrameLimitOptions(addPreloadOption(cmd, "worker"))))
    .addOption(
      new Option("--log-level <level>", "log level (JSON lines on stderr)")
        .choices(LOG_LEVELS)
        .default("info"),
    )
    .addHelpText(
      "after",
      "\nRuns until SIGINT or SIGTERM (exit 0), until it is retired, its --lifetime is over or the\n" +
        "cluster restarts (exit 0; under --nanny a restart, or --lifetime-restart, starts a new\n" +
        "worker), or until it loses the scheduler, its state machine fails or its memory passes\n" +
        "--memory-terminate (exit 1, saying why). Under --nanny, SIGINT or SIGTERM is passed on\n" +
        `to the worker process as a SIGTERM, and one that has not exited ${CHILD_STOP_GRACE_MS / 1000} s later (its event\n` +
        "loop blocked, its close stuck) is SIGKILLed, saying so; the nanny exits 0. Exit 2:\n" +
        "it cannot start (a bad option, a task module that does not load, a scheduler that\n" +
        "refuses it or is not reached within --death-timeout, a start that does not end within\n" +
        "--death-timeout (a preload's weftSetup, a plugin's setup), a --memory-limit the process\n" +
        "is beyond already).\n" +
        "A scheduler not started yet is waited for (each try within --connect-timeout) until\n" +
        "--death-timeout, if given, else until SIGINT or SIGTERM (exit 0), logging every 10 s.\n" +
        "Listening on 0.0.0.0, it advertises the address of the interface that reaches the scheduler.\n" +
        "With --http-address it prints `http at http://<host>:<port>` (GET /health, /metrics,\n" +
        "/json/identity.json, /status in a browser).",
    )
    .action(async (given: string | undefined, opts: WorkerCliOptions) => {
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
        const args = givenArgs(cmd, given === undefined ? [] : [given], [
          "--nanny",
          "--max-restarts",
        ]);
        await runNanny({ args, maxRestarts, stop: untilSignal(), taskModules: opts.tasks }, ctx);
        return;
      }
      const orphaned = nannyGone().then(() => {
        ctx.stderr.write("weft worker: its nanny is gone; closing\n");
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
        await runWorker(scheduler, opts, ctx, (w) => Promise.race([giveUp, w.closed]), giveUp);
      } finally {
        finished();
      }
      // The nanny tells its own SIGTERM from another's by whether it sent one.
      if (nannied && signal !== null && (ctx.exitCode ?? 0) === 0) ctx.exitCode = EXIT_SIGTERM;
    });
}
