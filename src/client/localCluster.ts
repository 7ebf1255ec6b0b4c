/**
 * A cluster in this process: a scheduler and workers talking over the
 * in-process transport (`inproc://`, messages passed by reference), or over
 * TCP on 127.0.0.1 — the same code either way.
 *
 * ```ts
 * const cluster = await LocalCluster.start({ workers: 2, threadsPerWorker: 1, taskModules: [tasksUrl] });
 * const client = await cluster.client();
 * console.log(await client.submit(inc, 1)); // 2
 * await cluster.close(); // closes its clients too
 * ```
 */

import type { Logger } from "pino";
import { type TlsCredentials, tlsCredentialsProblem } from "../comm/tls.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { SchedulerOptions } from "../scheduler/schedulerOptions.ts";
import { isRetiring, workersToClose } from "../scheduler/state/retire.ts";
import { DEFAULT_CLOSE_TIMEOUT_S } from "../util/closeBudget.ts";
import { closeTimeoutError } from "../util/closeTimeout.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { envLogLevel, weftLogger } from "../util/logger.ts";
import { loggerOption } from "../util/loggerOption.ts";
import { existingModuleUrl, fileModuleUrl } from "../util/moduleUrl.ts";
import { showValue } from "../util/showValue.ts";
import { timeoutProblem } from "../util/timers.ts";
import { allowOnPoolThread, refuseOnPoolThread } from "../worker/poolThreadMark.ts";
import { MAX_POOL_THREADS } from "../worker/poolThreads.ts";
import { Worker } from "../worker/worker.ts";
import { startsInSharedProcess } from "../worker/workerMemory.ts";
import { resolveWorkerOptions, type WorkerOptions } from "../worker/workerOptions.ts";
import { Adaptive, type AdaptOptions } from "./adaptive.ts";
import { optionsOf } from "./argChecks.ts";
import { Client } from "./client.ts";
import type { ClientOptions } from "./clientOptions.ts";
import { StartTogether, WORKER_CLOSE_TIMEOUT_S } from "./startTogether.ts";

/** The scheduler's options that a {@link LocalCluster} sets itself. */
export type SchedulerSetByCluster = "listen" | "tls" | "validate" | "logger";

/** The workers' options that a {@link LocalCluster} sets itself. */
export type WorkerSetByCluster =
  | "nthreads"
  | "executor"
  | "taskModules"
  | "validate"
  | "logger"
  | "tls"
  | "listen"
  | "scheduler"
  | "name"
  | "nanny";

/** Options of {@link LocalCluster.start}. */
export interface LocalClusterOptions {
  /** Number of workers at the start (0 or more; see `scale` and `adapt`). Default (or null, Dask's `n_workers=None`) 2. */
  workers?: number | null;
  /** Tasks each worker computes at once. Default (or null) 1. */
  threadsPerWorker?: number | null;
  /**
   * `"threads"` (default): each worker runs tasks on its own pool of worker
   * threads, so tasks run in parallel and values are copied (structured
   * clone) between threads. `"inline"`: tasks run on the main thread, values
   * are shared by reference: the least overhead, for small tasks and tests.
   */
  executor?: "inline" | "threads";
  /** Modules defining the task functions (file URLs or paths), loaded by every worker. */
  taskModules?: readonly (string | URL)[];
  /** Check every state machine after every stimulus (slow; for tests). Default false. */
  validate?: boolean;
  /**
   * `"inproc"` (default), `"tcp"` (on 127.0.0.1, random ports) or `"tls"`
   * (the same over TLS, with `tls`).
   */
  protocol?: "inproc" | "tcp" | "tls";
  /** The cluster's TLS credentials (see `comm/tls.ts`): for `protocol: "tls"`, which needs them. */
  tls?: TlsCredentials;
  /**
   * More options of the scheduler. Those the cluster sets (`listen`, `tls`,
   * `validate`, `logger`) are refused: the cluster's own options set them.
   */
  scheduler?: Omit<SchedulerOptions, SchedulerSetByCluster>;
  /**
   * More options of every worker. Those the cluster sets (`nthreads`,
   * `executor`, `taskModules`, `validate`, `logger`, `tls`, `listen`,
   * `scheduler`, `name`, `nanny`) are refused: the cluster's own options set
   * them. `acceptUploads` defaults to true here: the clients are of this process.
   */
  worker?: Omit<WorkerOptions, WorkerSetByCluster>;
  /** Where everything logs. Default: pino on stderr at `$WEFT_LOG_LEVEL` or `warn`. */
  logger?: Logger;
  /**
   * How many times a worker that stops on a fault (its state machine failed, it
   * lost the scheduler) is replaced by a new one, per worker slot, as Dask's
   * nanny restarts a dead worker. Default 5; 0 never replaces. A task whose
   * workers keep dying ends as `KilledWorker` (the scheduler's
   * `allowedFailures`). When a worker given up on leaves no worker running,
   * being replaced or starting (`scale`), the cluster closes itself, so waiting
   * futures fail instead of waiting forever. Workers closed by `close()` calls,
   * the last one included, leave it open: its futures wait for a worker
   * `scale` starts, as Dask's do.
   */
  maxWorkerRestarts?: number;
  /**
   * How long `start()` may take, in ms: the scheduler's start, then the
   * workers' (a plugin's `start` or a preload's `weftSetup` on either, a task
   * module's import). Past it, everything started is closed and `start()`
   * rejects, saying what was still starting. Default (or null, or Infinity):
   * as long as it takes, as Dask's LocalCluster, since a setup may load
   * something large; a scheduler still starting after 10 s warns, naming the
   * step, and one whose step waits on nothing fails the start.
   */
  startTimeoutMs?: number | null;
}

const TASK_MODULES = "LocalCluster option taskModules";

/**
 * The scheduler's and the workers' options that the cluster sets itself, each
 * with what to give instead: in `scheduler: {…}` or `worker: {…}` they were
 * overwritten without a word (`worker: { nthreads: 4 }` ran one thread).
 */
const CLUSTER_SETS: {
  readonly scheduler: Readonly<Record<SchedulerSetByCluster, string>>;
  readonly worker: Readonly<Record<WorkerSetByCluster, string>>;
} = {
  scheduler: {
    listen: "give the LocalCluster option protocol",
    tls: "give the LocalCluster option tls",
    validate: "give the LocalCluster option validate",
    logger: "give the LocalCluster option logger",
  },
  worker: {
    nthreads: "give the LocalCluster option threadsPerWorker",
    executor: "give the LocalCluster option executor",
    taskModules: "give the LocalCluster option taskModules",
    validate: "give the LocalCluster option validate",
    logger: "give the LocalCluster option logger",
    tls: "give the LocalCluster option tls",
    listen: "give the LocalCluster option protocol",
    scheduler: "its workers join its own scheduler",
    name: 'it names its workers "0", "1", …',
    nanny: "it is its workers' nanny",
  },
};

/** The options {@link LocalCluster.start} knows: every key of {@link LocalClusterOptions}. */
const START_OPTIONS: OptionNames<LocalClusterOptions> = {
  workers: true,
  threadsPerWorker: true,
  executor: true,
  taskModules: true,
  validate: true,
  protocol: true,
  tls: true,
  scheduler: true,
  worker: true,
  logger: true,
  maxWorkerRestarts: true,
  startTimeoutMs: true,
};

function nonNegativeInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 0) {
    throw new RangeError(`LocalCluster option ${name} must be an integer ≥ 0, got ${showValue(v)}`);
  }
  return v;
}

/**
 * A TypeError for options of {@link LocalCluster.start} that are not what they
 * should be, before anything starts: spread, a number or an array given for
 * `scheduler` or `worker` vanished without a word. (The `logger` is checked
 * as it is read, still before anything starts.)
 */
function checkStartOptions(options: LocalClusterOptions): void {
  optionsOf("LocalCluster.start", options);
  checkKnownOptions(
    "LocalCluster.start",
    options,
    START_OPTIONS,
    "the scheduler's and the workers' own go in scheduler: {…} and worker: {…}",
  );
  for (const name of ["scheduler", "worker"] as const) {
    const v: unknown = options[name];
    if (v !== undefined && (typeof v !== "object" || v === null || Array.isArray(v))) {
      throw new TypeError(`LocalCluster option ${name} must be an object, got ${showValue(v)}`);
    }
    if (v !== undefined) refuseClusterSet(name, v as Record<string, unknown>);
  }
  if (options.validate !== undefined && typeof options.validate !== "boolean") {
    throw new TypeError(
      `LocalCluster option validate must be true or false, got ${showValue(options.validate)}`,
    );
  }
}

/** A TypeError for an option of `part` (`scheduler: {…}` or `worker: {…}`) that the cluster sets. */
function refuseClusterSet(part: keyof typeof CLUSTER_SETS, given: Record<string, unknown>): void {
  for (const [key, instead] of Object.entries(CLUSTER_SETS[part])) {
    // Undefined is the option's absence (a spread config): the cluster's value is what it gets.
    if (Object.hasOwn(given, key) && given[key] !== undefined) {
      throw new TypeError(`LocalCluster option ${part}.${key} is set by the cluster: ${instead}`);
    }
  }
}

/** A worker that runs, or will: not closing, closed or failed. */
function isLive(w: Worker): boolean {
  const status = w.status;
  return status !== "closing" && status !== "closed" && status !== "failed";
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) {
    throw new RangeError(
      `LocalCluster option ${name} must be a positive integer, got ${showValue(v)}`,
    );
  }
  return v;
}

/** The option `startTimeoutMs` as a bound in ms, or null for none. */
function startTimeout(v: number | null | undefined): number | null {
  if (v === null || v === undefined || v === Number.POSITIVE_INFINITY) return null;
  const problem = timeoutProblem(v);
  if (problem !== null) {
    throw new RangeError(
      `LocalCluster option ${problem.replace(/^timeoutMs/, "startTimeoutMs")}, or null (no limit)`,
    );
  }
  return v;
}

/**
 * The bound of one {@link LocalCluster.start} (`startTimeoutMs`): at it, the
 * scheduler still starting is closed, else the workers still starting are
 * (their starts reject at once), and the start fails with {@link error}.
 */
class ClusterStartDeadline {
  /** Why the start failed, once the deadline came. */
  error: Error | null = null;
  private readonly timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number | null, scheduler: Scheduler, together: StartTogether) {
    // Not unref'd: a start waiting only on a promise that never settles would let the
    // process exit half started.
    if (ms === null) return;
    this.timer = setTimeout(() => {
      const step = scheduler.startStep;
      const still =
        step !== null ? `the scheduler was still ${step}` : workersStillStarting(together);
      this.error = new Error(
        `LocalCluster: the cluster did not start within startTimeoutMs (${ms} ms): ${still}; everything started was closed`,
      );
      if (step !== null) void scheduler.close();
      else together.fail(this.error);
    }, ms);
  }

  /** The start is over, done or failed: no deadline any more. */
  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * The workers still starting and the step each is in: `worker "0" was still
 * running its preload modules' weftSetup (…)`, `workers "0", "1" were each
 * still registering with the scheduler at …`, joined by "and".
 */
function workersStillStarting(together: StartTogether): string {
  const byStep = new Map<string, string[]>();
  for (const worker of together.stillStarting) {
    const step = worker.startStep ?? "starting";
    byStep.set(step, [...(byStep.get(step) ?? []), JSON.stringify(worker.options.name)]);
  }
  return [...byStep]
    .map(([step, names]) =>
      names.length === 1
        ? `worker ${names[0]} was still ${step}`
        : `workers ${names.join(", ")} were each still ${step}`,
    )
    .join(", and ");
}

/** A scheduler and workers in this process. */
export class LocalCluster {
  private readonly clients = new Set<Client>();
  private closePromise: Promise<void> | null = null;

  /** The workers, by slot: a replacement takes the slot of the worker it replaces. */
  private readonly slots: Worker[];
  private readonly restarts: number[];
  /** New workers of {@link scale} being started: they have no slot yet. */
  private readonly starting = new Set<Worker>();
  /** Replacements being started ({@link replace}), by the slot each will take. */
  private readonly replacing = new Map<number, Worker>();
  /** Workers that stopped and that {@link replace} gave up replacing (maxWorkerRestarts). */
  private readonly givenUp = new WeakSet<Worker>();
  /** The last {@link scale} (or adaptive step) under way: they run one after another. */
  private scaling: Promise<void> = Promise.resolve();
  /** The client retiring workers for {@link scale}, made on first use. */
  private ownClient: Promise<Client> | null = null;
  /** The adaptive scaling running, if any. */
  private adaptive: Adaptive | null = null;
  /** How many workers were named: the next new worker's name (Dask's LocalCluster counts too). */
  private workersMade: number;
  /** A new worker named `name`, after the cluster's start. */
  private readonly newWorker: (name: string) => Worker;

  private constructor(
    /** The cluster's scheduler, running in this process. */
    readonly scheduler: Scheduler,
    workers: readonly Worker[],
    private readonly logger: Logger,
    /** A new worker named `name` (the cluster's workers are named "0", "1", …). */
    newWorker: (name: string) => Worker,
    private readonly maxWorkerRestarts: number,
    /** For the cluster's own news (workers replaced, given up on). */
    private readonly clusterLogger: Logger,
    /** The credentials its clients connect with (`protocol: "tls"`). */
    private readonly tls: TlsCredentials | undefined,
    /** How many workers it may run at once (see {@link mostWorkers}), and why. */
    private readonly size: {
      readonly maxWorkers: number;
      readonly executor: "inline" | "threads";
      readonly nthreads: number;
    },
  ) {
    // Every worker made from now on (a restart's, a replacement's, a scale's) starts in
    // a process the others already share (see startsInSharedProcess).
    this.newWorker = (name) => {
      const worker = newWorker(name);
      startsInSharedProcess(worker);
      return worker;
    };
    this.slots = [...workers];
    this.restarts = workers.map(() => 0);
    this.workersMade = workers.length;
    for (const [slot, w] of this.slots.entries()) this.supervise(slot, w);
    // Closed under the cluster (`client.shutdown()`, an idle timeout, its state machine
    // failing): the cluster is over, or `client()` and `scale` would wait for a scheduler
    // that is gone until their timeouts, then fail naming a missing listener.
    void scheduler.closed.then(() => {
      if (this.closePromise !== null) return;
      const fault = scheduler.fault;
      const why = `its scheduler closed${fault === null ? "" : ` (${fault})`}`;
      this.clusterLogger.info(`${why}; closing the cluster`);
      void this.shutDown(why);
    });
  }

  /**
   * The workers, one per slot: a worker that stopped on a fault, or closed
   * for a restart (`client.restart()`), is replaced in its slot, by a worker of
   * the same name; one closed by a `close()` call stays, closed. Workers are
   * named `"0"`, `"1"`, … in the order they were made (Dask's LocalCluster's
   * names): a worker's is its `options.name`.
   */
  get workers(): readonly Worker[] {
    return this.slots;
  }

  /** Start the scheduler, then the workers; resolves once every worker has registered. */
  static async start(options: LocalClusterOptions = {}): Promise<LocalCluster> {
    refuseOnPoolThread("LocalCluster.start");
    checkStartOptions(options);
    const nWorkers = nonNegativeInt("workers", options.workers ?? 2);
    const nthreads = positiveInt("threadsPerWorker", options.threadsPerWorker ?? 1);
    const executor = options.executor ?? "threads";
    if (executor !== "inline" && executor !== "threads") {
      throw new TypeError(
        `LocalCluster option executor must be "inline" or "threads", got ${showValue(executor)}`,
      );
    }
    const maxWorkers = mostWorkers(executor, nthreads);
    if (nWorkers > maxWorkers)
      throw new RangeError(
        tooManyWorkers("LocalCluster option workers", nWorkers, executor, nthreads),
      );
    const protocol = options.protocol ?? "inproc";
    if (protocol !== "inproc" && protocol !== "tcp" && protocol !== "tls") {
      throw new TypeError(
        `LocalCluster option protocol must be "inproc", "tcp" or "tls", got ${showValue(protocol)}`,
      );
    }
    const tls = options.tls;
    if (protocol === "tls" && tls === undefined) {
      throw new TypeError(
        'LocalCluster option protocol "tls" needs the tls option (ca, cert, key)',
      );
    }
    if (protocol !== "tls" && tls !== undefined) {
      throw new TypeError(
        `LocalCluster option tls applies with protocol "tls" (got protocol ${JSON.stringify(protocol)}, which would not use it)`,
      );
    }
    // Here, or the scheduler's check names its own option.
    const tlsProblem = tls === undefined ? null : tlsCredentialsProblem(tls);
    if (tlsProblem !== null) throw new TypeError(`LocalCluster option ${tlsProblem}`);
    // Checked here, so that a missing module is named as the cluster's, once (the scheduler
    // and every worker get them).
    const given = options.taskModules ?? [];
    if (!Array.isArray(given)) throw new TypeError(`${TASK_MODULES} must be an array`);
    const taskModules = (given as readonly (string | URL)[]).map((m) =>
      existingModuleUrl(fileModuleUrl(m, TASK_MODULES), TASK_MODULES),
    );
    const listenAt = protocol === "inproc" ? null : `${protocol}://127.0.0.1:0`;
    const secure = tls !== undefined ? { tls } : {};
    // Nameless: each part's child logger names it (a name here would appear twice a line).
    // Checked as the scheduler's and the workers' are, whose loggers are its children.
    const logger = loggerOption("LocalCluster", options.logger, () =>
      weftLogger(undefined, envLogLevel("warn")),
    );
    const validate = options.validate ?? false;
    const maxWorkerRestarts = nonNegativeInt("maxWorkerRestarts", options.maxWorkerRestarts ?? 5);
    const startTimeoutMs = startTimeout(options.startTimeoutMs);
    const workerOptions = (name: string, schedulerAddress: string): WorkerOptions => ({
      batchedSendIntervalMs: 0,
      ...options.worker,
      name,
      scheduler: schedulerAddress,
      listen: listenAt ?? "inproc://worker",
      ...secure,
      nthreads,
      executor: executor === "threads" ? "piscina" : "inline",
      taskModules,
      validate,
      // The cluster is its workers' nanny: it starts another when one closes for a restart.
      nanny: true,
      // Its clients are of this process, which could run any code anyway: true unless refused.
      acceptUploads: options.worker?.acceptUploads ?? true,
      logger: logger.child({ name: "weft.worker" }),
    });
    // Checked before anything starts: with workers: 0, a bad worker option (a typo) was
    // found only by each worker scale or adapt tried to start, adapt retrying for good.
    resolveWorkerOptions(workerOptions("0", "inproc://scheduler"));
    const scheduler = new Scheduler({
      batchedSendIntervalMs: 0,
      ...options.scheduler,
      // For runOnScheduler and registerSchedulerPlugin, as for the workers' tasks.
      taskModules: [...taskModules, ...(options.scheduler?.taskModules ?? [])],
      listen: listenAt ?? "inproc://scheduler",
      ...secure,
      validate,
      logger: logger.child({ name: "weft.scheduler" }),
    });
    const together = new StartTogether();
    const deadline = new ClusterStartDeadline(startTimeoutMs, scheduler, together);
    try {
      await scheduler.listen();
    } catch (err) {
      deadline.clear();
      await scheduler.close();
      throw deadline.error ?? err;
    }
    const newWorker = (name: string) => {
      const worker = new Worker(workerOptions(name, scheduler.address));
      // Started later, out of a task's call that may have let this cluster start.
      allowOnPoolThread(worker);
      return worker;
    };
    const started = await Promise.allSettled(
      Array.from({ length: nWorkers }, async (_, i) =>
        together.start(together.make(() => newWorker(String(i)))),
      ),
    );
    deadline.clear();
    const workers = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    if (together.failed) {
      await together.closeAll();
      await scheduler.close();
      if (deadline.error !== null) throw deadline.error;
      const failure = together.failure;
      const why = failure instanceof Error ? failure.message : String(failure);
      throw new Error(`LocalCluster: a worker failed to start: ${why}`, { cause: failure });
    }
    return new LocalCluster(
      scheduler,
      workers,
      logger,
      newWorker,
      maxWorkerRestarts,
      logger.child({ name: "weft.cluster" }),
      tls,
      { maxWorkers, executor, nthreads },
    );
  }

  /**
   * When `worker` stops on a fault, or closes for a restart of the cluster,
   * start another in its slot (or give up: {@link replace}).
   */
  private supervise(slot: number, worker: Worker): void {
    void worker.closed.then(() => {
      if (this.closePromise !== null || this.slots[slot] !== worker) return;
      if (worker.restartRequested) void this.replace(slot, worker, null);
      else if (worker.fault !== null) void this.replace(slot, worker, worker.fault);
    });
  }

  /** Start a worker in place of `dead`, which stopped on `fault` (null: closed for a restart). */
  private async replace(slot: number, dead: Worker, fault: string | null): Promise<void> {
    const address = dead.address;
    // A restart asked for is no fault: its first start counts against nothing.
    let asked = fault === null;
    if (asked) this.restarts[slot] = 0;
    // A replacement that fails to start uses up a restart too; the next one is tried.
    while (this.closePromise === null && (asked || this.restarts[slot] < this.maxWorkerRestarts)) {
      if (asked) {
        this.clusterLogger.info(
          { worker: address },
          "the scheduler restarts a worker; starting a new one",
        );
      } else {
        this.restarts[slot] += 1;
        this.clusterLogger.warn(
          {
            worker: address,
            fault: fault ?? "could not start after a restart",
            restart: this.restarts[slot],
            of: this.maxWorkerRestarts,
          },
          "a worker stopped on a fault; starting another in its place",
        );
      }
      asked = false;
      let worker: Worker;
      try {
        // Made in here: its options are checked again (a task module deleted since the
        // cluster started), and a throw out of this un-awaited call would crash the process.
        // As a nanny starts its worker again under the same name.
        worker = this.newWorker(dead.options.name ?? String(slot));
        this.replacing.set(slot, worker);
        await worker.start();
      } catch (err) {
        if (this.closePromise !== null) return; // closed meanwhile: close() stopped it
        this.clusterLogger.error(
          { err },
          "could not start a worker in place of the one that stopped",
        );
        continue;
      } finally {
        this.replacing.delete(slot);
      }
      if (this.closePromise !== null) {
        await worker.close();
        return;
      }
      this.slots[slot] = worker;
      this.supervise(slot, worker);
      return;
    }
    if (this.closePromise !== null) return;
    this.givenUp.add(dead);
    this.clusterLogger.error(
      {
        worker: address,
        fault: fault ?? "could not start after a restart",
        restarts: this.maxWorkerRestarts,
      },
      "a worker stopped on a fault and is not replaced again (maxWorkerRestarts)",
    );
    await this.closeIfNoneLeft();
  }

  /**
   * Close the cluster when no worker is left running and none is coming, so
   * that waiting futures fail instead of waiting forever. New workers that
   * {@link scale} is starting are waited for: they may run yet (the cluster
   * closed under them, failing the scale), or fail to start.
   */
  private async closeIfNoneLeft(): Promise<void> {
    const running = () => this.slots.some((w) => w.status === "running" || w.status === "paused");
    // Settles after the scale under way, the one that started them.
    while (this.closePromise === null && !running() && this.starting.size > 0) {
      const scaling = this.scaling;
      await scaling;
      // Workers left starting with no scale under way would spin this loop on a settled
      // promise, starving the event loop: counted below, they keep the cluster open.
      if (this.scaling === scaling) break;
    }
    if (this.closePromise !== null || this.workerCount > 0) return;
    const why = "no worker of the LocalCluster is left running (they stopped on faults)";
    this.clusterLogger.error(`${why}; closing the cluster`);
    await this.shutDown(why);
  }

  /**
   * The workers running or starting, and those closing or closed that a new
   * worker replaces (a restart, a fault with restarts left): what {@link scale}
   * counts.
   */
  get workerCount(): number {
    let n = this.starting.size;
    for (const [slot, w] of this.slots.entries()) if (isLive(w) || this.replaced(slot)) n++;
    return n;
  }

  /**
   * {@link workerCount} less the workers the scheduler is retiring (a
   * `client.retireWorkers` under way): they are leaving, so scaling counts
   * them out. Counted, a `scale(2)` while one of two workers was being
   * retired started none, and left one; and adaptive scaling, finding more
   * workers than it wanted, retired others on top of them.
   */
  private get stayingCount(): number {
    const s = this.scheduler.state;
    let n = this.workerCount;
    for (const w of this.slots) {
      if (!isLive(w)) continue;
      const ws = s.workers.get(w.address);
      if (ws !== undefined && isRetiring(s, ws)) n--;
    }
    return n;
  }

  /**
   * Whether the worker in `slot`, closing or closed, is being replaced or will
   * be. Counted from the moment it closes, not once {@link replace} starts the
   * new one: that waits until it has closed, and a {@link scale} meanwhile
   * started one more.
   */
  private replaced(slot: number): boolean {
    if (this.replacing.has(slot)) return true;
    const w = this.slots[slot];
    if (this.closePromise !== null || isLive(w) || this.givenUp.has(w)) return false;
    if (w.restartRequested) return true;
    return w.fault !== null && this.restarts[slot] < this.maxWorkerRestarts;
  }

  /**
   * Scale to `n` workers (Dask's `cluster.scale(n)`), and stop any adaptive
   * scaling ({@link adapt}). Workers closing for a restart count: their
   * replacements are coming ({@link workerCount}); those being retired (a
   * `client.retireWorkers` under way) do not: they are leaving. More workers are started,
   * each in a free slot (one whose worker was retired or closed by a `close()`
   * call and is not being replaced; a worker that stopped on a fault keeps its
   * slot), else a new one. Fewer are retired through the scheduler, as
   * `client.retireWorkers({ n })` does, among the cluster's own workers
   * only: those running no task and holding least go first, their results
   * moved to the others. Resolves once the new
   * workers have registered, or the retired ones have closed. A worker whose
   * results no other can take is not retired (logged), so a cluster holding
   * results keeps one worker. Calls run one after another. Rejects with "the
   * LocalCluster is closed" when the cluster is closed, or closes before the
   * scaling is done.
   */
  scale(n: number): Promise<void> {
    if (!Number.isInteger(n) || n < 0) {
      return Promise.reject(new RangeError(`scale: n must be an integer ≥ 0, got ${showValue(n)}`));
    }
    const { maxWorkers, executor, nthreads } = this.size;
    if (n > maxWorkers) {
      return Promise.reject(new RangeError(tooManyWorkers("scale: n", n, executor, nthreads)));
    }
    this.adaptive?.stop();
    this.adaptive = null;
    return this.scaleTo(n);
  }

  /**
   * Scale with the work (Dask's `cluster.adapt`): every `intervalMs` (1,000),
   * the scheduler's state says how many workers would run the work there is
   * in about `targetDurationMs` (5,000), from the tasks' measured durations
   * (`adaptiveTarget`); the cluster scales to that, within `minimum` (0) and
   * `maximum` (no limit): up at once, down after `waitCount` (3) intervals in a
   * row asking for fewer, retiring idle workers first. Replaces an adaptive
   * scaling running already; `stop()` it, call {@link scale}, or close the
   * cluster to end it. Throws a RangeError naming a bad option.
   */
  adapt(options: AdaptOptions = {}): Adaptive {
    if (this.closePromise !== null) throw new Error("the LocalCluster is closed");
    const adaptive = new Adaptive(
      {
        state: this.scheduler.state,
        workerCount: () => this.stayingCount,
        ownWorkers: () => this.ownAddresses(),
        // Past what the process can run, the work waits for the workers it has.
        scaleTo: (n) => this.scaleTo(Math.min(n, this.size.maxWorkers)),
        logger: this.clusterLogger,
      },
      options,
    );
    this.adaptive?.stop();
    this.adaptive = adaptive;
    return adaptive;
  }

  /**
   * The addresses of the workers this cluster started, in any state (a
   * worker closing for a restart, still registered, is its own), and those
   * starting: the scheduler's others joined it (`weft worker`, a `Worker`
   * given its address).
   */
  private ownAddresses(): Set<string> {
    const own = new Set<string>();
    for (const w of [...this.slots, ...this.starting, ...this.replacing.values()]) {
      own.add(w.address);
    }
    return own;
  }

  private scaleTo(n: number): Promise<void> {
    const run = this.scaling.then(() => this.scaleNow(n));
    this.scaling = run.catch(() => {});
    return run;
  }

  /**
   * Closed, or its scheduler closing under it: that tells the cluster only once closed, and
   * until then refuses connections, which a new client or worker would wait past until its
   * timeout.
   */
  private get over(): boolean {
    return this.closePromise !== null || this.scheduler.status !== "running";
  }

  private async scaleNow(n: number): Promise<void> {
    if (this.over) throw new Error("the LocalCluster is closed");
    const have = this.stayingCount;
    try {
      if (n > have) await this.startWorkers(n - have);
      else if (n < have) await this.retire(have - n);
    } catch (err) {
      // Closed meanwhile: what failed (a worker "closed while starting", the cluster's
      // client closed) is the close's doing, which is the news.
      if (this.closePromise !== null) throw new Error("the LocalCluster is closed", { cause: err });
      throw err;
    }
  }

  private async startWorkers(count: number): Promise<void> {
    const together = new StartTogether();
    const started = await Promise.allSettled(
      Array.from({ length: count }, async () => {
        const w = together.make(() => this.newWorker(String(this.workersMade++)));
        this.starting.add(w); // until it has a slot: counted, and closed by close()
        try {
          return await together.start(w);
        } catch (err) {
          this.starting.delete(w);
          throw err;
        }
      }),
    );
    let failure: unknown = together.failure;
    for (const r of started) {
      if (r.status === "rejected") continue;
      const w = r.value;
      this.starting.delete(w);
      if (this.closePromise !== null) {
        await w.close();
        failure ??= new Error("closed once started");
        continue;
      }
      const slot = this.freeSlot();
      this.slots[slot] = w;
      this.restarts[slot] = 0;
      this.supervise(slot, w);
    }
    if (failure !== null) {
      const why = failure instanceof Error ? failure.message : String(failure);
      throw new Error(`scale: a worker failed to start: ${why}`, { cause: failure });
    }
  }

  /**
   * The slot for a new worker: one whose worker closed without a fault
   * (retired, or closed by a `close()` call) and is not being replaced (a
   * restart's replacement takes its slot once started: a new worker there was
   * overwritten, left running untracked), else a new one. A worker that
   * stopped on a fault keeps its slot, to be looked at.
   */
  private freeSlot(): number {
    const slot = this.slots.findIndex(
      (w, i) => w.status === "closed" && w.fault === null && !this.replaced(i),
    );
    return slot < 0 ? this.slots.length : slot;
  }

  private async retire(count: number): Promise<void> {
    this.ownClient ??= this.client({ name: "cluster" });
    let client: Client;
    try {
      client = await this.ownClient;
    } catch (err) {
      this.ownClient = null;
      throw err;
    }
    if (client.isClosed) {
      this.ownClient = null; // lost its scheduler: the next call connects again
      throw new Error("scale: the cluster's client is closed");
    }
    const chosen = this.ownWorkersToClose(count);
    if (chosen.length === 0) return; // all being retired already, or running long-running tasks
    const { retired, failed } = await client.retireWorkers(chosen);
    if (failed.length > 0) {
      this.clusterLogger.warn({ failed }, "scale: some workers could not be retired");
    }
    // Retired, a worker is told to close: wait until it has.
    const gone = new Set(retired);
    await Promise.all(this.slots.filter((w) => gone.has(w.address)).map((w) => w.closed));
  }

  /**
   * The addresses of `count` of this cluster's workers to retire, picked as
   * `retireWorkers({ n })` picks (`workersToClose`: those running no task and
   * holding least first), among its own only: a worker of another's that
   * joined its scheduler is not its to close (Dask's `scale` retires only the
   * workers of its spec), and given `n`, the scheduler closed such a worker
   * holding nothing first, leaving the cluster's own running.
   */
  private ownWorkersToClose(count: number): string[] {
    const s = this.scheduler.state;
    const own = new Set(this.slots.filter(isLive).map((w) => w.address));
    return workersToClose(s, s.workers.size)
      .filter((ws) => own.has(ws.address))
      .slice(0, count)
      .map((ws) => ws.address);
  }

  /** The scheduler's address. */
  get address(): string {
    return this.scheduler.address;
  }

  /**
   * Connect a new client to this cluster; {@link close} closes it. Rejects
   * when the cluster is closed, or closes while the client connects.
   */
  async client(options: ClientOptions = {}): Promise<Client> {
    // Spread below, a number or a string would vanish without a word.
    optionsOf("LocalCluster.client", options);
    if (this.over) throw new Error("the LocalCluster is closed");
    const client = await Client.connect(this.address, {
      logger: this.logger.child({ name: "weft.client" }),
      ...(this.tls !== undefined ? { tls: this.tls } : {}),
      ...options,
    });
    if (this.closePromise !== null) {
      // close() ran while it connected, and closed the clients it had then.
      await client.close();
      throw new Error("the LocalCluster is closed");
    }
    this.clients.add(client);
    // A closed client is forgotten: a long-lived cluster serving many short-lived clients
    // would otherwise keep every one of them (and what it held) until the cluster closes.
    void client.closed.then(() => this.clients.delete(client));
    return client;
  }

  /**
   * Check every state machine's invariants (the scheduler's and each
   * worker's `validateState()`); throws on the first broken one.
   */
  validateState(): void {
    this.scheduler.state.validateState();
    for (const w of this.workers) w.state.validateState();
  }

  /**
   * Close the clients, the workers and the scheduler. The plugins' and
   * preloads' teardowns (and a start step in progress) are waited on up to
   * `timeout` seconds (default 30; `Infinity`: until they end) by the
   * scheduler, and up to 5 s, or `timeout` if less, by each worker, which
   * waits as long on its running tasks: one still running then is logged at
   * warn and no longer waited on. Idempotent: a later call's `timeout` is
   * not used. Throws a RangeError for a `timeout` that is not a number ≥ 0.
   */
  close(timeout: number = DEFAULT_CLOSE_TIMEOUT_S): Promise<void> {
    const refused = closeTimeoutError("LocalCluster.close", timeout);
    if (refused !== null) return Promise.reject(refused);
    return this.shutDown(undefined, timeout);
  }

  /** {@link close}, telling the clients' waiting futures `why` when it is not the user's call. */
  private shutDown(why?: string, timeout = DEFAULT_CLOSE_TIMEOUT_S): Promise<void> {
    this.closePromise ??= (async () => {
      this.adaptive?.stop();
      await Promise.allSettled([...this.clients].map((c) => c.close(why)));
      // Replacements still starting are stopped too (they would wait for the scheduler).
      const starting = [...this.starting, ...this.replacing.values()];
      const workerTimeout = Math.min(timeout, WORKER_CLOSE_TIMEOUT_S);
      await Promise.allSettled([...this.workers, ...starting].map((w) => w.close(workerTimeout)));
      await this.scheduler.close(timeout);
    })();
    return this.closePromise;
  }
}

/** The most workers one process runs, of any executor: each a state machine, a connection, timers. */
export const MAX_LOCAL_WORKERS = 10_000;

/**
 * How many workers of `nthreads` threads a LocalCluster may run at once: with
 * the threads executor, as many as {@link MAX_POOL_THREADS} threads allow (a
 * million workers, or threads, started at once ran the process out of memory,
 * a fatal V8 error, not a refusal); else {@link MAX_LOCAL_WORKERS}.
 */
function mostWorkers(executor: "inline" | "threads", nthreads: number): number {
  return executor === "threads"
    ? Math.min(MAX_LOCAL_WORKERS, Math.floor(MAX_POOL_THREADS / nthreads))
    : MAX_LOCAL_WORKERS;
}

/** The refusal of `n` workers, more than {@link mostWorkers}. */
function tooManyWorkers(
  what: string,
  n: number,
  executor: "inline" | "threads",
  nthreads: number,
): string {
  return executor === "threads" && n * nthreads > MAX_POOL_THREADS
    ? `${what} × threadsPerWorker must be at most ${MAX_POOL_THREADS} with the threads executor (one process: each thread is a V8 isolate, all started at once; executor "inline" starts none), got ${n} × ${nthreads}`
    : `${what} must be at most ${MAX_LOCAL_WORKERS} (one process), got ${n}`;
}
