/** The options of a {@link Scheduler} server and their defaults. */

import type { Logger } from "pino";
import {
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  frameLimitsProblem,
} from "../comm/comm.ts";
import { resolveHttpOptions } from "../comm/httpEndpoints.ts";
import { plainListenProblem, type TlsCredentials, tlsCredentialsProblem } from "../comm/tls.ts";
import { WORKER_CLOSE_MAX_MS } from "../util/closeBudget.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { envLogLevel, weftLogger } from "../util/logger.ts";
import { loggerOption } from "../util/loggerOption.ts";
import { existingModuleUrl, fileModuleUrl } from "../util/moduleUrl.ts";
import { preloadUrl } from "../util/preload.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import type { SchedulerPlugin } from "./plugins.ts";
import { SCHEDULER_STATE_OPTIONS, type SchedulerStateOptions } from "./state/options.ts";

/** Options of the scheduler server. */
export interface SchedulerOptions {
  /**
   * Where to listen: `tcp://host:port` (port 0: any), `tls://host:port` (with
   * `tls`) or `inproc://…`. Default `tcp://127.0.0.1:0`.
   */
  listen?: string;
  /**
   * The cluster's TLS credentials, for `tls://` (see `comm/tls.ts`): the CA
   * whose certificates workers and clients must show, and this scheduler's
   * certificate and key. Default none.
   */
  tls?: TlsCredentials;
  /** Check the state machine after every stimulus (slow; for tests). Default false. */
  validate?: boolean;
  /** Options of the state machine (`clock` and `validate` are set by the server). */
  state?: Omit<SchedulerStateOptions, "clock" | "validate">;
  /** Batching interval of the streams to workers and clients, in ms; 0 sends at the next turn. Default 2. */
  batchedSendIntervalMs?: number;
  /**
   * A worker not heard from for this long is removed, in ms (Dask's
   * `worker-ttl`; workers heartbeat every second). `Infinity` never. Default 30,000.
   */
  workerTtlMs?: number;
  /**
   * A lock, multi-lock or semaphore lease its client has not refreshed for
   * this long, in ms, is released and goes to the next waiter (Dask's
   * `distributed.scheduler.locks.lease-timeout`): clients refresh theirs every
   * third of it (Dask's `lease-validation-interval`, 10 s), and the scheduler
   * looks as often, so that a client that froze holding a lock (stopped, a VM
   * paused) loses it although its connection stays open. `Infinity`: never.
   * Default 30,000.
   */
  leaseTimeoutMs?: number;
  /**
   * Close the cluster (every worker, then the scheduler, as `Client.shutdown`)
   * once it has been idle this long, in ms: no transition, and nothing
   * running, queued or waiting for a worker (Dask's `idle-timeout`). Connected
   * clients do not count. Default null: never.
   */
  idleTimeoutMs?: number | null;
  /**
   * A connection must say who it is (its first message) within this many ms:
   * more than 0, at most 2^31 − 1, or `Infinity` (no limit). Default 10,000.
   */
  handshakeTimeoutMs?: number;
  /**
   * How long a worker the scheduler removed and told to close (retired, or
   * restarted) may keep its connection open, in ms: then the scheduler closes
   * it, saying so in its log. Default 100,000, what a worker's close may take
   * at most (its teardowns and running tasks waited on up to 30 s each), so that
   * an orderly close is not cut short; `Infinity`: until the worker closes it.
   */
  closeWorkerGraceMs?: number;
  /**
   * Before accepting a worker at a `tcp://` address, connect to that address
   * once (within `handshakeTimeoutMs`, at most 5 s): a worker advertising an
   * address nobody can reach (a wrong `--contact-address`) is refused at once
   * instead of stalling every graph that needs its results. Default true.
   */
  checkWorkerAddress?: boolean;
  /** TCP: messages go in frames of at most this many bytes. Default 64 MiB (see `FrameLimits`). */
  maxFrameBytes?: number;
  /** TCP: the largest message sent or accepted, in bytes. Default 4 GiB − 1 (see `FrameLimits`). */
  maxMessageBytes?: number;
  /**
   * How many task runs the task stream keeps (`Client.getTaskStream`, Dask's
   * `distributed.scheduler.dashboard.tasks.task-stream-length`). 0: none.
   * Default 100,000.
   */
  taskStreamLength?: number;
  /**
   * Move queued tasks from busy workers to idle ones (Dask's
   * `distributed.scheduler.work-stealing`): every `workStealingIntervalMs`
   * the scheduler runs a round of work stealing (see docs/scheduler.md,
   * "Work stealing"). Default true.
   */
  workStealing?: boolean;
  /**
   * How often a round of work stealing runs, in ms (Dask's
   * `work-stealing-interval`). Default 100.
   */
  workStealingIntervalMs?: number;
  /**
   * Drop the replicas of in-memory keys beyond those needed (Dask's
   * `distributed.scheduler.active-memory-manager.start` with its default
   * policy, ReduceReplicas): every `activeMemoryManagerIntervalMs` the
   * scheduler runs a round (see docs/scheduler.md, "Active memory manager").
   * Default true.
   */
  activeMemoryManager?: boolean;
  /**
   * How often a round of the Active Memory Manager runs, in ms (Dask's
   * `active-memory-manager.interval`). Default 2000.
   */
  activeMemoryManagerIntervalMs?: number;
  /** Where to log. Default: a pino logger named `weft.scheduler` at `$WEFT_LOG_LEVEL` or `info`. */
  logger?: Logger;
  /**
   * How many of its last log records the scheduler keeps for clients to read
   * (`client.getSchedulerLogs`, Dask's `distributed.admin.log-length`). 0:
   * none. Default 10,000.
   */
  logLength?: number;
  /**
   * How many events it keeps of each topic (`Client.logEvent`, Dask's
   * `distributed.scheduler.events-log-length`). 0: none (subscribers are
   * still sent them). Default 100,000.
   */
  eventsLogLength?: number;
  /**
   * Serve `/health`, `/metrics` (Prometheus) and a little JSON over HTTP at this
   * address (`:8787`, `127.0.0.1:8787`, port 0: any; Dask's
   * `--dashboard-address`). Default none.
   */
  httpAddress?: string | null;
  /** The first word of every metric's name at `/metrics`. Default `weft` (Dask's is `dask`). */
  metricsNamespace?: string;
  /** Plugins added as the scheduler starts (see `SchedulerPlugin`). Default none. */
  plugins?: readonly SchedulerPlugin[];
  /**
   * Modules imported as the scheduler starts (paths or file URLs; Dask's
   * `--preload`): each one's `weftSetup(scheduler)` export, if any, is called
   * (and awaited) then, and its `weftTeardown(scheduler)` as it closes. Default none.
   */
  preload?: readonly (string | URL)[];
  /**
   * Task modules (paths or file URLs) whose task functions clients may run on
   * the scheduler (`Client.runOnScheduler`) or make scheduler plugins with
   * (`Client.registerSchedulerPlugin`); the cluster's (`Client.loadTaskModules`)
   * serve too. Imported when first needed, not at the start. Default none.
   */
  taskModules?: readonly (string | URL)[];
}

/** {@link SchedulerOptions} with every default filled in. */
export type ResolvedSchedulerOptions = Required<
  Omit<SchedulerOptions, "tls" | "preload" | "idleTimeoutMs" | "taskModules">
> & {
  tls?: TlsCredentials;
  /** null: never. */
  idleTimeoutMs: number | null;
  /** As file URLs. */
  preload: readonly string[];
  /** As file URLs. */
  taskModules: readonly string[];
};

function nonNegative(name: string, v: number): number {
  if (typeof v !== "number" || Number.isNaN(v) || v < 0) {
    throw new RangeError(`Scheduler option ${name} must be a number >= 0, got ${showValue(v)}`);
  }
  return v;
}

function booleanOption(name: string, v: boolean): boolean {
  if (typeof v !== "boolean") {
    throw new TypeError(`Scheduler option ${name} must be a boolean, got ${showValue(v)}`);
  }
  return v;
}

function nonNegativeInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) {
    throw new RangeError(`Scheduler option ${name} must be an integer >= 0, got ${showValue(v)}`);
  }
  return v;
}

function idleTimeout(v: number | null | undefined): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !(v > 0 && v <= MAX_TIMER_MS)) {
    throw new RangeError(
      `Scheduler option idleTimeoutMs must be a number of ms > 0 and at most ${MAX_TIMER_MS}, or null, got ${showValue(v)}`,
    );
  }
  return v;
}

/** `leaseTimeoutMs`: ms > 0 within a timer's range, or `Infinity` (never). */
function leaseTimeout(v: number | undefined): number {
  if (v === undefined) return 30_000;
  if (typeof v !== "number" || !((v > 0 && v <= MAX_TIMER_MS) || v === Infinity)) {
    throw new RangeError(
      `Scheduler option leaseTimeoutMs must be a number of ms > 0 and at most ${MAX_TIMER_MS} (Infinity: never), got ${showValue(v)}`,
    );
  }
  return v;
}

/**
 * A delay a Node.js timer can wait, in ms (>= 0). A longer one, `Infinity`
 * included, fires after 1 ms, with a `TimeoutOverflowWarning`.
 */
function timerDelay(name: string, v: number): number {
  if (nonNegative(name, v) > MAX_TIMER_MS) {
    throw new RangeError(
      `Scheduler option ${name} must be a number of ms >= 0 and at most ${MAX_TIMER_MS}, got ${showValue(v)}`,
    );
  }
  return v;
}

/**
 * `handshakeTimeoutMs`: ms > 0 within a timer's range, or `Infinity` (no limit).
 * Taken as it came, 0, `Infinity` or a delay beyond a timer's range made the
 * scheduler close every connection that had not introduced itself within 1 ms,
 * logging `a connection did not introduce itself in time`: a client or worker
 * further away than the loopback, or slower to send, was never let in.
 */
function handshakeTimeout(v: number | undefined): number {
  if (v === undefined) return 10_000;
  if (typeof v !== "number" || !((v > 0 && v <= MAX_TIMER_MS) || v === Infinity)) {
    throw new RangeError(
      `Scheduler option handshakeTimeoutMs must be a number of ms > 0 and at most ${MAX_TIMER_MS} (Infinity: no limit), got ${showValue(v)}`,
    );
  }
  return v;
}

function workStealingInterval(v: number | undefined): number {
  return timerInterval("workStealingIntervalMs", v, 100);
}

/** A timer's period in ms: `fallback` if not given. */
function timerInterval(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !(v > 0 && v <= MAX_TIMER_MS)) {
    throw new RangeError(
      `Scheduler option ${name} must be a number of ms > 0 and at most ${MAX_TIMER_MS}, got ${showValue(v)}`,
    );
  }
  return v;
}

/** `closeWorkerGraceMs`: a timer's delay, or `Infinity` (no timer). */
function closeWorkerGrace(v: number | undefined): number {
  if (v === undefined) return WORKER_CLOSE_MAX_MS;
  if (typeof v !== "number" || !((v >= 0 && v <= MAX_TIMER_MS) || v === Infinity)) {
    throw new RangeError(
      `Scheduler option closeWorkerGraceMs must be a number of ms >= 0 and at most ${MAX_TIMER_MS} (Infinity: never), got ${showValue(v)}`,
    );
  }
  return v;
}

/** Every option of {@link SchedulerOptions}: others are refused. */
const SCHEDULER_OPTIONS: OptionNames<SchedulerOptions> = {
  listen: true,
  tls: true,
  validate: true,
  state: true,
  batchedSendIntervalMs: true,
  workerTtlMs: true,
  leaseTimeoutMs: true,
  idleTimeoutMs: true,
  handshakeTimeoutMs: true,
  closeWorkerGraceMs: true,
  checkWorkerAddress: true,
  maxFrameBytes: true,
  maxMessageBytes: true,
  taskStreamLength: true,
  workStealing: true,
  workStealingIntervalMs: true,
  activeMemoryManager: true,
  activeMemoryManagerIntervalMs: true,
  logger: true,
  logLength: true,
  eventsLogLength: true,
  httpAddress: true,
  metricsNamespace: true,
  plugins: true,
  preload: true,
  taskModules: true,
};

/**
 * `o` checked, with the defaults filled in. Throws a TypeError or RangeError naming
 * the first bad option (an unknown one included).
 */
export function resolveSchedulerOptions(o: SchedulerOptions = {}): ResolvedSchedulerOptions {
  if (typeof o !== "object" || o === null) {
    throw new TypeError(`Scheduler options must be an object, got ${showValue(o)}`);
  }
  checkKnownOptions("Scheduler options", o, SCHEDULER_OPTIONS);
  const listen = o.listen ?? "tcp://127.0.0.1:0";
  if (typeof listen !== "string" || listen === "") {
    throw new TypeError(`Scheduler option listen must be an address, got ${showValue(listen)}`);
  }
  const ttl = nonNegative("workerTtlMs", o.workerTtlMs ?? 30_000);
  if (ttl === 0) throw new RangeError("Scheduler option workerTtlMs must be > 0 (Infinity: never)");
  const limitsProblem = frameLimitsProblem(o);
  if (limitsProblem !== null) throw new RangeError(`Scheduler option ${limitsProblem}`);
  const tlsProblem = o.tls === undefined ? null : tlsCredentialsProblem(o.tls);
  if (tlsProblem !== null) throw new TypeError(`Scheduler option ${tlsProblem}`);
  const plain = o.tls === undefined ? null : plainListenProblem(listen, "Scheduler option");
  if (plain !== null) throw new TypeError(plain);
  const { httpAddress, metricsNamespace } = resolveHttpOptions(o, "Scheduler");
  return {
    listen,
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    validate: o.validate ?? false,
    state: stateOptions(o.state),
    batchedSendIntervalMs: timerDelay("batchedSendIntervalMs", o.batchedSendIntervalMs ?? 2),
    workerTtlMs: ttl,
    leaseTimeoutMs: leaseTimeout(o.leaseTimeoutMs),
    idleTimeoutMs: idleTimeout(o.idleTimeoutMs),
    handshakeTimeoutMs: handshakeTimeout(o.handshakeTimeoutMs),
    closeWorkerGraceMs: closeWorkerGrace(o.closeWorkerGraceMs),
    checkWorkerAddress: o.checkWorkerAddress ?? true,
    maxFrameBytes: o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    maxMessageBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    taskStreamLength: nonNegativeInt("taskStreamLength", o.taskStreamLength ?? 100_000),
    workStealing: booleanOption("workStealing", o.workStealing ?? true),
    workStealingIntervalMs: workStealingInterval(o.workStealingIntervalMs),
    activeMemoryManager: booleanOption("activeMemoryManager", o.activeMemoryManager ?? true),
    activeMemoryManagerIntervalMs: timerInterval(
      "activeMemoryManagerIntervalMs",
      o.activeMemoryManagerIntervalMs,
      2000,
    ),
    logger: loggerOption("Scheduler", o.logger, () =>
      weftLogger("weft.scheduler", envLogLevel("info")),
    ),
    logLength: nonNegativeInt("logLength", o.logLength ?? 10_000),
    eventsLogLength: nonNegativeInt("eventsLogLength", o.eventsLogLength ?? 100_000),
    httpAddress,
    metricsNamespace,
    plugins: pluginList(o.plugins),
    preload: preloadList(o.preload),
    taskModules: moduleList(o.taskModules),
  };
}

/** The server sets the machine's `clock` and `validate` itself. */
const { clock: _clock, validate: _validate, ...SERVER_STATE_OPTIONS } = SCHEDULER_STATE_OPTIONS;

/**
 * The state machine's options, their names checked here so that the error names
 * the server's option (the machine checks the values as it starts).
 */
function stateOptions(v: SchedulerOptions["state"]): NonNullable<SchedulerOptions["state"]> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) {
    throw new TypeError(`Scheduler option state must be an object, got ${showValue(v)}`);
  }
  checkKnownOptions(
    "Scheduler option state",
    v,
    SERVER_STATE_OPTIONS,
    "the server sets clock, and validate is a Scheduler option",
  );
  return v;
}

function moduleList(modules: readonly (string | URL)[] | undefined): readonly string[] {
  if (modules === undefined) return [];
  if (!Array.isArray(modules)) throw new TypeError("Scheduler option taskModules must be an array");
  return modules.map((m) => existingModuleUrl(fileModuleUrl(m, TASK_MODULES), TASK_MODULES));
}

const TASK_MODULES = "Scheduler option taskModules";

/**
 * `preload`, checked to be an array, as a Worker's is: a lone path failed as
 * `(o.preload ?? []).map is not a function`, naming no option.
 */
function preloadList(preload: readonly (string | URL)[] | undefined): readonly string[] {
  if (preload === undefined) return [];
  if (!Array.isArray(preload)) {
    throw new TypeError(
      `Scheduler option preload must be an array of file URLs or paths, got ${showValue(preload)}`,
    );
  }
  return preload.map((m) => preloadUrl(m, "Scheduler option preload"));
}

function pluginList(plugins: readonly SchedulerPlugin[] | undefined): readonly SchedulerPlugin[] {
  if (plugins === undefined) return [];
  if (!Array.isArray(plugins)) throw new TypeError("Scheduler option plugins must be an array");
  return [...plugins];
}
