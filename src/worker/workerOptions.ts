/** The options of a {@link Worker} and their defaults. */

import { existsSync, statSync } from "node:fs";
import { availableParallelism, tmpdir, totalmem } from "node:os";
import { resolve } from "node:path";
import type { Logger } from "pino";
import {
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  frameLimitsProblem,
} from "../comm/comm.ts";
import { checkDialAddress, SCHEMES } from "../comm/connect.ts";
import { resolveHttpOptions } from "../comm/httpEndpoints.ts";
import { plainListenProblem, type TlsCredentials, tlsCredentialsProblem } from "../comm/tls.ts";
import { parseHostPort, splitScheme } from "../util/address.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { envLogLevel, weftLogger } from "../util/logger.ts";
import { loggerOption } from "../util/loggerOption.ts";
import { memoryShare } from "../util/memoryShare.ts";
import { existingModuleUrl, fileModuleUrl } from "../util/moduleUrl.ts";
import { isWholeByteSize, parseBytes } from "../util/parseBytes.ts";
import { preloadUrl } from "../util/preload.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { wildcardOf } from "../util/wildcardHost.ts";
import { LOST_INPUT_HELD_MS } from "./lostSpills.ts";
import type { MemoryMeasure } from "./memoryMonitor.ts";
import type { NannyLink } from "./nannyLink.ts";
import { MAX_POOL_THREADS } from "./poolThreads.ts";

/** Options of a {@link Worker}. */
export interface WorkerOptions {
  /** The scheduler's address, e.g. `tcp://10.0.0.1:8786` or `inproc://sched/1`. */
  scheduler: string;
  /**
   * A name of its own (Dask's `--name`), unique among the cluster's workers:
   * `workers` restrictions and requests (`retireWorkers`, `run`, …) may give it
   * in place of its address; the scheduler refuses a second worker of the
   * same name. Default none.
   */
  name?: string | null;
  /**
   * Where to listen for peers and clients. Default `tcp://127.0.0.1:0`, or
   * `tls://127.0.0.1:0` with `tls`; `inproc://` in one process.
   */
  listen?: string;
  /** The address to advertise, if not the listener's (e.g. behind NAT). */
  contactAddress?: string;
  /**
   * The cluster's TLS credentials, for `tls://` scheduler, listen and peer
   * addresses (see `comm/tls.ts`). Default none.
   */
  tls?: TlsCredentials;
  /** Tasks computing at once. Default: the number of CPUs. */
  nthreads?: number;
  /**
   * `"threads"` (a pool of worker threads, default; `"piscina"` is the same) or
   * `"inline"` (the main thread), as `LocalCluster` and `weft worker --executor` name them.
   */
  executor?: "threads" | "piscina" | "inline";
  /**
   * Modules that define the task functions (`defineTask`), as file URLs
   * (strings or `URL`s) or paths (relative ones from the working directory);
   * imported by every pool thread (and by the main thread for the inline
   * executor).
   */
  taskModules?: readonly (string | URL)[];
  /**
   * Threads the pool may start beyond `nthreads`, while some of those are still
   * starting (a seceded task's thread runs other tasks meanwhile, so waiting
   * tasks need no threads of their own). Default 32.
   */
  maxSecededThreads?: number;
  /** Abstract resources this worker supplies, `{GPU: 2}`. */
  resources?: Readonly<Record<string, number>>;
  /** Check the state machine after every stimulus (slow; for tests). Default false. */
  validate?: boolean;
  /** Concurrent incoming transfers (Dask's `distributed.worker.connections.incoming`). Default 4. */
  transferIncomingCountLimit?: number;
  /** Concurrent outgoing transfers before answering `busy` (Dask's `…connections.outgoing`). Default 4. */
  transferOutgoingCountLimit?: number;
  /**
   * Bytes to gather from one peer in one request, beyond the first task. Default
   * 50 MB. The state machine is given at most {@link maxMessageBytes}: a peer refuses
   * an answer larger than this worker takes.
   */
  transferMessageBytesLimit?: number;
  /** Bytes of incoming transfers under way at once. Default unlimited. */
  transferIncomingBytesLimit?: number;
  /** Wait before asking a busy peer again, in ms. Default 150. */
  retryBusyWorkerDelayMs?: number;
  /** How often to look for missing dependencies, in ms (Dask's find_missing). Default 1,000. */
  findMissingIntervalMs?: number;
  /**
   * How long the tasks here holding a spilled value gone from disk may all be ones
   * that could be waiting for the task that found it lost before that task errs
   * with the loss, rather than being rescheduled again, in ms (see
   * `LOST_INPUT_HELD_MS`). Default 2,000.
   */
  lostInputHeldMs?: number;
  /** How often to tell the scheduler this worker is alive, in ms. Default 1,000. */
  heartbeatIntervalMs?: number;
  /** Batching interval of the stream to the scheduler, in ms; 0 for the next turn. Default 2. */
  batchedSendIntervalMs?: number;
  /** Timeout to connect to the scheduler or a peer, in ms: each try's, when the scheduler refuses. Default 30,000. */
  connectTimeoutMs?: number;
  /**
   * How long the whole start may take, in ms (Dask's `death_timeout`, which
   * bounds `Server.start`): a step still running then (a preload's `weftSetup`,
   * a plugin's `setup`) closes the worker and fails `start()`, saying what it
   * was doing; a scheduler that refuses connections (not started yet, or
   * started again) is waited for until then. `null`: no bound, as Dask's
   * default and `weft worker`'s. Not given: the scheduler is waited for
   * `connectTimeoutMs` from the first try, and the rest of the start as long
   * as it takes.
   */
  deathTimeoutMs?: number | null;
  /** TCP: messages go in frames of at most this many bytes. Default 64 MiB (see `FrameLimits`). */
  maxFrameBytes?: number;
  /** TCP: the largest message sent or accepted, in bytes. Default 4 GiB − 1 (see `FrameLimits`). */
  maxMessageBytes?: number;
  /**
   * Bytes of task values this worker keeps in memory before it spills to disk
   * (Dask's `memory_limit`): a number, a size such as `"2GiB"`, or `"auto"`,
   * the machine's memory (or its container's) times the worker's share of the
   * CPUs, `nthreads` of them, as Dask's default; or, as Dask reads a bare number
   * up to 1, a share of that memory (`0.5`, `1` all of it), `0` no limit. Values
   * beyond `memoryTarget` of it go to files, least recently used first, and come
   * back when needed;
   * the memory monitor acts at other shares of it. Default: none (everything
   * stays in memory).
   */
  memoryLimit?: number | string;
  /** The share of `memoryLimit` kept in memory (Dask's `distributed.worker.memory.target`). Default 0.6. */
  memoryTarget?: number;
  /** Where spilled values go (a directory of their own is made there). Default: the system's temporary directory. */
  spillDirectory?: string;
  /**
   * What the memory monitor compares with `memoryLimit` (see `MemoryMonitor`):
   * `"managed"`, the task values held in memory; `"process"`, the process's
   * resident set (Dask's measure: right when the worker has the process to
   * itself, as `weft worker` has); or a function giving bytes. Default
   * `"managed"`: several workers may share a process.
   */
  memoryMeasure?: MemoryMeasure;
  /**
   * Beyond this share of `memoryLimit`, values are spilled until the measure is
   * back at `memoryTarget` (Dask's `distributed.worker.memory.spill`); with the
   * `"managed"` measure the store does this itself. Default 0.7; false: never.
   */
  memorySpill?: number | false;
  /**
   * Beyond this share of `memoryLimit` the worker pauses: it starts no task and
   * fetches no input, and the scheduler assigns it nothing, until it is back
   * within it (Dask's `distributed.worker.memory.pause`). Default 0.8; false: never.
   */
  memoryPause?: number | false;
  /**
   * Beyond this share of `memoryLimit` the worker closes on a fault, as Dask's
   * nanny kills its worker (`distributed.worker.memory.terminate`): its results
   * are computed again elsewhere. Default 0.95; false: never.
   */
  memoryTerminate?: number | false;
  /** How often the memory monitor measures, in ms (Dask's `memory.monitor-interval`). Default 100. */
  memoryMonitorIntervalMs?: number;
  /**
   * Whoever started this worker starts another in its place when the
   * scheduler restarts it (`client.restart()`, `client.restartWorkers()`), as
   * Dask's nanny does: a `weft worker --nanny` process or a `LocalCluster`.
   * The scheduler is told: only such a worker is restarted alone, and a
   * restart waits for the new one. Default false: on a restart of the cluster,
   * the worker closes for good ({@link Worker.restartRequested} says why it
   * closed).
   */
  nanny?: boolean;
  /**
   * How this worker hands the cluster's nanny plugins (`client.registerNannyPlugin`)
   * to its nanny: `weft worker --nanny` gives its worker processes one over their
   * IPC channel (`ipcNannyLink()`). Needs `nanny`. Default null: the worker has no
   * nanny that takes plugins, and refuses them (a `LocalCluster`'s workers).
   */
  nannyLink?: NannyLink | null;
  /**
   * Leave the cluster after this long, in ms (Dask's `--lifetime`): the worker
   * asks the scheduler to retire it, which copies the results only it holds to
   * other workers, then closes (see {@link Worker.closeGracefully}). For
   * clusters that run for long: workers are renewed before what leaks in them
   * (memory, file handles) hurts. Default null: never.
   */
  lifetimeMs?: number | null;
  /**
   * Each worker's lifetime is off by up to this many ms either way, at random
   * (Dask's `--lifetime-stagger`), so that workers started together do not all
   * leave at once. At most `lifetimeMs`. Default 0.
   */
  lifetimeStaggerMs?: number;
  /**
   * Once its lifetime is over, close as restarted (Dask's
   * `--lifetime-restart`): its nanny (`weft worker --nanny`, a `LocalCluster`)
   * starts a new worker in its place. Default false: it is gone.
   */
  lifetimeRestart?: boolean;
  /**
   * Save and import the files clients upload into the cluster
   * (`client.uploadFile`, Dask's `upload_file`): a client that may upload
   * runs code of its choosing on this worker. Default false: uploads are
   * refused, and so is a cluster that has some (the worker does not start).
   * A `LocalCluster`'s workers accept them: its clients are its process's.
   */
  acceptUploads?: boolean;
  /** Where to log. Default: a pino logger named `weft.worker` at level `$WEFT_LOG_LEVEL` or `info`. */
  logger?: Logger;
  /**
   * How many of its last log records the worker keeps for clients to read
   * (`client.getWorkerLogs`, Dask's `distributed.admin.log-length`). 0: none.
   * Default 10,000.
   */
  logLength?: number;
  /**
   * Serve `/health`, `/metrics` (Prometheus) and a little JSON over HTTP at this
   * address (`:8788`, `127.0.0.1:0`; Dask's `--dashboard-address`). Default none.
   */
  httpAddress?: string | null;
  /** The first word of every metric's name at `/metrics`. Default `weft` (Dask's is `dask`). */
  metricsNamespace?: string;
  /**
   * Modules imported as the worker starts (paths or file URLs; Dask's
   * `--preload`), once it listens and before it registers: each one's
   * `weftSetup(worker)` export, if any, is called (and awaited) then, and its
   * `weftTeardown(worker)` as it closes. Default none.
   */
  preload?: readonly (string | URL)[];
}

/** {@link WorkerOptions} with every default filled in. */
export type ResolvedWorkerOptions = Required<
  Omit<
    WorkerOptions,
    | "contactAddress"
    | "executor"
    | "taskModules"
    | "memoryLimit"
    | "tls"
    | "preload"
    | "lifetimeMs"
    | "name"
    | "nannyLink"
  >
> & {
  /** null: none. */
  nannyLink: NannyLink | null;
  /** null: none. */
  name: string | null;
  /** null: never. */
  lifetimeMs: number | null;
  /** As file URLs. */
  preload: readonly string[];
  tls?: TlsCredentials;
  contactAddress: string | null;
  /** In bytes; null: no limit, no spilling. At most the machine's memory (see `memoryLimitCapped`). */
  memoryLimit: number | null;
  /**
   * The limit as given and the machine's memory (the container's limit if lower), when
   * the one was above the other and `memoryLimit` was lowered to it, as Dask's does
   * ("Ignoring provided memory limit"); null otherwise. The worker warns of it as it starts.
   */
  memoryLimitCapped: { readonly asGiven: number | string; readonly machine: number } | null;
  executor: "piscina" | "inline";
  /** As file URLs. */
  taskModules: readonly string[];
  /**
   * The bound of the whole start: `deathTimeoutMs` when given; null (none) when
   * not, the scheduler wait alone then bounded by its default (`connectTimeoutMs`).
   */
  startTimeoutMs: number | null;
};

function booleanOption(name: string, v: boolean): boolean {
  if (typeof v !== "boolean") {
    throw new TypeError(`Worker option ${name} must be true or false, got ${showValue(v)}`);
  }
  return v;
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`Worker option ${name} must be a positive integer, got ${showValue(v)}`);
  return v;
}

/** A positive integer a Node.js timer can wait (a longer delay fires at once, with a warning). */
function timerMs(name: string, v: number): number {
  if (positiveInt(name, v) > MAX_TIMER_MS) {
    throw new RangeError(
      `Worker option ${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${showValue(v)}`,
    );
  }
  return v;
}

/** A delay of 0 or more ms a Node.js timer can wait (a longer one fires at once, with a warning). */
function delayMs(name: string, v: number): number {
  if (nonNegative(name, v) > MAX_TIMER_MS) {
    throw new RangeError(
      `Worker option ${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${showValue(v)}`,
    );
  }
  return v;
}

function nonNegativeInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0)
    throw new RangeError(`Worker option ${name} must be an integer >= 0, got ${showValue(v)}`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (typeof v !== "number" || Number.isNaN(v) || v < 0) {
    throw new RangeError(`Worker option ${name} must be a number >= 0, got ${showValue(v)}`);
  }
  return v;
}

const TASK_MODULES = "Worker option taskModules";

/** A file URL for a task module given as a URL or a path. */
export function moduleUrl(given: string | URL): string {
  return fileModuleUrl(given, TASK_MODULES);
}

/**
 * `address` as peers, clients and the scheduler will connect to it: a known scheme
 * (none means TCP, written out so that the scheduler checks it is reachable) and, for
 * TCP, a host and a port. A malformed one was advertised as given: the worker
 * registered, and every fetch from it failed.
 */
function contactAddress(address: string, listen: string): string {
  const fail = (why: string): never => {
    throw new TypeError(
      `Worker option contactAddress must be an address peers can connect to, such as tcp://10.0.0.1:4000, got ${showValue(address)}: ${why}`,
    );
  };
  if (typeof address !== "string" || address === "") fail("not an address");
  const { scheme, location } = splitScheme(address);
  // Whatever the scheme: a wildcard in tls://0.0.0.0:4000 (or foo://) was said only
  // after its scheme, as though another scheme would have made the address one.
  const wildcard = scheme === "inproc" ? null : wildcardProblem(location);
  const schemeWrong = schemeProblem(scheme, listen);
  if (schemeWrong !== null)
    fail(wildcard === null ? schemeWrong : `${wildcard}; and ${schemeWrong}`);
  if (wildcard !== null) fail(wildcard);
  if (scheme === "inproc") return address;
  let host = "";
  let port = 0;
  try {
    ({ host, port } = parseHostPort(location));
  } catch (err) {
    fail((err as Error).message);
  }
  // Said apart: "needs a host and a port" was said of tcp://typo:0, which gives both.
  if (host === "") fail("it names no host");
  if (port === 0) {
    fail(
      "port 0 cannot be connected to (it means any free port to a listener): give the port the worker listens on",
    );
  }
  return `${scheme}://${location}`;
}

/** Why a contact address of `scheme` does not reach a worker listening at `listen`, or null. */
function schemeProblem(scheme: string, listen: string): string | null {
  if (scheme !== "inproc" && scheme !== "tcp" && scheme !== "tls") {
    return `unknown scheme ${JSON.stringify(scheme)} (inproc, tcp or tls)`;
  }
  // Peers dial the scheme advertised: tcp:// to a tls:// listener (or the reverse)
  // registered, and every fetch from the worker failed in the handshake; an inproc://
  // address for a TCP listener named no listener of this worker (another's, or none).
  const listening = splitScheme(listen).scheme;
  if (listening === scheme) return null;
  return `this worker listens on ${listening}:// (listen ${listen}), which peers dialling ${scheme}:// would not reach`;
}

/**
 * Why the host of a contact address's `location` (`host:port`) is the wildcard, or
 * null (a location that does not parse is said by the checks after).
 * Advertised, it was taken: a peer on another host dials its own machine there.
 */
function wildcardProblem(location: string): string | null {
  let host: string;
  try {
    ({ host } = parseHostPort(location));
  } catch {
    return null;
  }
  const wildcard = wildcardOf(host);
  if (wildcard === null) return null;
  // `0` or `0.0` said as what the resolver reads them as, which a user may not know.
  const what = host === wildcard ? host : `${host} (${wildcard} to the resolver)`;
  return `${what} means every interface to a listener, no address a peer on another host can connect to: give the worker's own host name or IP`;
}

/** `url` if its file exists; else a clear error (not a module loader's stack from a pool thread). */
function existingModule(url: string): string {
  return existingModuleUrl(url, TASK_MODULES);
}

function workerName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`Worker option name must be a non-empty string, got ${showValue(name)}`);
  }
  return name;
}

/** The `nannyLink` option, checked: a worker without a nanny has none to link to. */
function nannyLink(link: NannyLink | null | undefined, nanny: boolean): NannyLink | null {
  if (link === undefined || link === null) return null;
  if (
    typeof link !== "object" ||
    typeof link.addPlugin !== "function" ||
    typeof link.removePlugin !== "function"
  ) {
    throw new TypeError(
      `Worker option nannyLink must have addPlugin and removePlugin methods, got ${showValue(link)}`,
    );
  }
  // Called as the worker begins to close: not a function then, the close would fail half done.
  if (link.closing !== undefined && typeof link.closing !== "function") {
    throw new TypeError(
      `Worker option nannyLink's closing must be a function when given, got ${showValue(link.closing)}`,
    );
  }
  if (!nanny) throw new TypeError("Worker option nannyLink needs nanny: true");
  return link;
}

/**
 * A list option (`taskModules`, `preload`), checked to be an array: a lone path
 * failed as `(o.taskModules ?? []).map is not a function`, naming no option.
 */
function listOption<T>(name: string, v: readonly T[] | undefined): readonly T[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new TypeError(
      `Worker option ${name} must be an array of file URLs or paths, got ${showValue(v)}`,
    );
  }
  return v;
}

/**
 * `resources`, checked to be `{name: amount}`: a string or an array reached the
 * state machine, whose error named no Worker option, and a `Map` passed the
 * amounts' checks unread.
 */
function resourcesOption(
  v: Readonly<Record<string, number>> | undefined | null,
): Readonly<Record<string, number>> {
  if (v === undefined || v === null) return {};
  const proto = typeof v === "object" ? Object.getPrototypeOf(v) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(
      `Worker option resources must be {name: amount}, e.g. {GPU: 2}, got ${showValue(v)}`,
    );
  }
  for (const [k, amount] of Object.entries(v)) {
    // Finite: the scheduler refuses a worker registering an infinite amount.
    if (!Number.isFinite(nonNegative(`resources.${k}`, amount))) {
      throw new RangeError(`Worker option resources.${k} must be finite, got ${showValue(amount)}`);
    }
  }
  return v;
}

/**
 * `address` (the option `name`), checked as `connect` and `listen` will check it:
 * otherwise a malformed one failed only as the worker started, its error naming no
 * option. `listen` may leave out the port (any).
 */
function addressOption(name: "scheduler" | "listen", address: string): string {
  try {
    if (name === "scheduler") checkDialAddress(address);
    else {
      const { scheme, location } = splitScheme(address);
      if (!(SCHEMES as readonly string[]).includes(scheme)) {
        throw new Error(`unknown scheme ${JSON.stringify(scheme)} (${SCHEMES.join(", ")})`);
      }
      if (scheme !== "inproc") parseHostPort(location, 0);
    }
  } catch (err) {
    throw new TypeError(
      `Worker option ${name} must be an address such as tcp://10.0.0.1:8786, got ${showValue(address)}: ${(err as Error).message}`,
    );
  }
  return address;
}

/** Every option of {@link WorkerOptions}: others are refused. */
const WORKER_OPTIONS: OptionNames<WorkerOptions> = {
  scheduler: true,
  name: true,
  listen: true,
  contactAddress: true,
  tls: true,
  nthreads: true,
  executor: true,
  taskModules: true,
  maxSecededThreads: true,
  resources: true,
  validate: true,
  transferIncomingCountLimit: true,
  transferOutgoingCountLimit: true,
  transferMessageBytesLimit: true,
  transferIncomingBytesLimit: true,
  retryBusyWorkerDelayMs: true,
  findMissingIntervalMs: true,
  lostInputHeldMs: true,
  heartbeatIntervalMs: true,
  batchedSendIntervalMs: true,
  connectTimeoutMs: true,
  deathTimeoutMs: true,
  maxFrameBytes: true,
  maxMessageBytes: true,
  memoryLimit: true,
  memoryTarget: true,
  spillDirectory: true,
  memoryMeasure: true,
  memorySpill: true,
  memoryPause: true,
  memoryTerminate: true,
  memoryMonitorIntervalMs: true,
  nanny: true,
  nannyLink: true,
  lifetimeMs: true,
  lifetimeStaggerMs: true,
  lifetimeRestart: true,
  acceptUploads: true,
  logger: true,
  logLength: true,
  httpAddress: true,
  metricsNamespace: true,
  preload: true,
};

/**
 * `o` checked, with the defaults filled in. Throws a TypeError or RangeError naming
 * the first bad option (an unknown one included; `scheduler` is required).
 */
export function resolveWorkerOptions(o: WorkerOptions): ResolvedWorkerOptions {
  if (typeof o !== "object" || o === null) {
    throw new TypeError(`Worker options must be an object, got ${showValue(o)}`);
  }
  checkKnownOptions("Worker options", o, WORKER_OPTIONS);
  if (typeof o.scheduler !== "string" || o.scheduler === "") {
    throw new TypeError("Worker option scheduler (the scheduler's address) is required");
  }
  addressOption("scheduler", o.scheduler);
  const executor = o.executor === "threads" ? "piscina" : (o.executor ?? "piscina");
  if (executor !== "piscina" && executor !== "inline") {
    throw new TypeError(
      `Worker option executor must be "threads" or "inline", got ${showValue(executor)}`,
    );
  }
  const resources = resourcesOption(o.resources);
  const limitsProblem = frameLimitsProblem(o);
  if (limitsProblem !== null) throw new RangeError(`Worker option ${limitsProblem}`);
  const tlsProblem = o.tls === undefined ? null : tlsCredentialsProblem(o.tls);
  if (tlsProblem !== null) throw new TypeError(`Worker option ${tlsProblem}`);
  // With credentials, peers talk TLS too, whatever the scheduler's scheme: a default of
  // tcp:// for a tcp:// or inproc:// scheduler was refused below, as an option not given.
  const listen = addressOption(
    "listen",
    o.listen ?? (o.tls !== undefined ? "tls://127.0.0.1:0" : "tcp://127.0.0.1:0"),
  );
  const plain = o.tls === undefined ? null : plainListenProblem(listen, "Worker option");
  if (plain !== null) throw new TypeError(plain);
  const { httpAddress, metricsNamespace } = resolveHttpOptions(o, "Worker");
  // The default never refused, on a machine of more CPUs than that.
  const nthreads = positiveInt(
    "nthreads",
    o.nthreads ?? Math.min(availableParallelism(), MAX_POOL_THREADS),
  );
  if (executor === "piscina" && nthreads > MAX_POOL_THREADS) {
    throw new RangeError(
      `Worker option nthreads must be at most ${MAX_POOL_THREADS} with the threads executor (each thread is a V8 isolate, all started at once; executor "inline" starts none), got ${nthreads}`,
    );
  }
  const connectTimeoutMs = timerMs("connectTimeoutMs", o.connectTimeoutMs ?? 30_000);
  const lifetimeMs =
    o.lifetimeMs === undefined || o.lifetimeMs === null
      ? null
      : timerMs("lifetimeMs", o.lifetimeMs);
  const lifetimeStaggerMs = nonNegative("lifetimeStaggerMs", o.lifetimeStaggerMs ?? 0);
  if (lifetimeStaggerMs > 0 && (lifetimeMs === null || lifetimeStaggerMs > lifetimeMs)) {
    throw new RangeError(
      `Worker option lifetimeStaggerMs (${lifetimeStaggerMs}) must be at most lifetimeMs (${lifetimeMs ?? "none"})`,
    );
  }
  return {
    scheduler: o.scheduler,
    name: workerName(o.name),
    listen,
    contactAddress:
      o.contactAddress === undefined ? null : contactAddress(o.contactAddress, listen),
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    nthreads,
    executor,
    taskModules: listOption("taskModules", o.taskModules).map((m) => existingModule(moduleUrl(m))),
    maxSecededThreads: nonNegativeInt("maxSecededThreads", o.maxSecededThreads ?? 32),
    resources,
    // A string ("false") would turn validation on: a check after every stimulus.
    validate: booleanOption("validate", o.validate ?? false),
    transferIncomingCountLimit: positiveInt(
      "transferIncomingCountLimit",
      o.transferIncomingCountLimit ?? 4,
    ),
    transferOutgoingCountLimit: positiveInt(
      "transferOutgoingCountLimit",
      o.transferOutgoingCountLimit ?? 4,
    ),
    transferMessageBytesLimit: nonNegative(
      "transferMessageBytesLimit",
      o.transferMessageBytesLimit ?? 50e6,
    ),
    transferIncomingBytesLimit: nonNegative(
      "transferIncomingBytesLimit",
      o.transferIncomingBytesLimit ?? Number.POSITIVE_INFINITY,
    ),
    retryBusyWorkerDelayMs: delayMs("retryBusyWorkerDelayMs", o.retryBusyWorkerDelayMs ?? 150),
    findMissingIntervalMs: timerMs("findMissingIntervalMs", o.findMissingIntervalMs ?? 1000),
    lostInputHeldMs: delayMs("lostInputHeldMs", o.lostInputHeldMs ?? LOST_INPUT_HELD_MS),
    heartbeatIntervalMs: timerMs("heartbeatIntervalMs", o.heartbeatIntervalMs ?? 1000),
    batchedSendIntervalMs: delayMs("batchedSendIntervalMs", o.batchedSendIntervalMs ?? 2),
    connectTimeoutMs,
    deathTimeoutMs:
      o.deathTimeoutMs === null
        ? null
        : timerMs("deathTimeoutMs", o.deathTimeoutMs ?? connectTimeoutMs),
    // Only as given: by default a slow weftSetup or task module import (a model
    // loaded in a LocalCluster) is waited for, as by Dask's default death_timeout.
    startTimeoutMs:
      o.deathTimeoutMs === null || o.deathTimeoutMs === undefined
        ? null
        : timerMs("deathTimeoutMs", o.deathTimeoutMs),
    maxFrameBytes: o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    maxMessageBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    ...cappedMemoryLimit(o.memoryLimit, memoryLimit(o.memoryLimit, nthreads)),
    ...memoryFractions(o),
    spillDirectory: spillDirectory(o.spillDirectory),
    memoryMeasure: memoryMeasure(o.memoryMeasure),
    memoryMonitorIntervalMs: timerMs("memoryMonitorIntervalMs", o.memoryMonitorIntervalMs ?? 100),
    nanny: booleanOption("nanny", o.nanny ?? false),
    nannyLink: nannyLink(o.nannyLink, o.nanny ?? false),
    lifetimeMs,
    lifetimeStaggerMs,
    lifetimeRestart: booleanOption("lifetimeRestart", o.lifetimeRestart ?? false),
    acceptUploads: booleanOption("acceptUploads", o.acceptUploads ?? false),
    logger: loggerOption("Worker", o.logger, () => weftLogger("weft.worker", envLogLevel("info"))),
    logLength: nonNegativeInt("logLength", o.logLength ?? 10_000),
    httpAddress,
    metricsNamespace,
    preload: listOption("preload", o.preload).map((m) => preloadUrl(m, "Worker option preload")),
  };
}

/**
 * The memory of this machine, or of the container it runs in if that has less
 * (Dask's `system.MEMORY_LIMIT`, which reads the cgroup's limit too).
 */
export function systemMemory(): number {
  const total = totalmem();
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 && constrained < total ? constrained : total;
}

/** `"auto"`: the worker's share of the machine's memory, by its threads (Dask's). */
export function autoMemoryLimit(nthreads: number): number {
  return Math.floor(systemMemory() * Math.min(1, nthreads / availableParallelism()));
}

/**
 * `memoryTarget`, `memorySpill`, `memoryPause` and `memoryTerminate`, each
 * checked, and the target below the pause and the terminate shares: the store
 * keeps values in memory up to the target, so a target at or above the pause
 * share pauses the worker for good (nothing spills to resume it), and one at or
 * above the terminate share has it killed for values it was allowed to keep.
 */
function memoryFractions(o: WorkerOptions): {
  memoryTarget: number;
  memorySpill: number | false;
  memoryPause: number | false;
  memoryTerminate: number | false;
} {
  const memoryTarget = fraction("memoryTarget", o.memoryTarget ?? 0.6);
  const memorySpill = fractionOrFalse("memorySpill", o.memorySpill ?? 0.7);
  const memoryPause = fractionOrFalse("memoryPause", o.memoryPause ?? 0.8);
  const memoryTerminate = fractionOrFalse("memoryTerminate", o.memoryTerminate ?? 0.95);
  for (const [name, share] of [
    ["memoryPause", memoryPause],
    ["memoryTerminate", memoryTerminate],
  ] as const) {
    if (share !== false && memoryTarget >= share) {
      throw new RangeError(
        `Worker option memoryTarget (${memoryTarget}) must be below ${name} (${share}): values are kept in memory up to the target, so the worker would ${name === "memoryPause" ? "pause for good" : "be terminated"} for what it may keep`,
      );
    }
  }
  return { memoryTarget, memorySpill, memoryPause, memoryTerminate };
}

/**
 * `memoryLimit` in bytes (null for none); a clear error for a bad one. A bare number
 * from 0 to 1 is Dask's: 0 no limit, another that share of the machine's memory.
 */
function memoryLimit(v: number | string | undefined, nthreads: number): number | null {
  if (v === undefined) return null;
  if (v === "auto") return autoMemoryLimit(nthreads);
  const share = memoryShare(v);
  if (share === 0) return null;
  // At least a byte: a share of a tiny container's memory is a budget all the same.
  if (share !== null) return Math.max(1, Math.floor(share * systemMemory()));
  let n: number;
  try {
    n = typeof v === "string" ? parseBytes(v) : v;
  } catch (err) {
    throw new RangeError(`Worker option memoryLimit: ${(err as Error).message}`);
  }
  if (!(typeof n === "number" && Number.isFinite(n) && n >= 1)) {
    throw new RangeError(
      `Worker option memoryLimit must be a size of at least 1 byte, got ${showValue(v)}`,
    );
  }
  // parse_bytes truncates "1.5" to 1 byte: a fraction of a byte is a mistake, not a limit.
  if (typeof v === "string" ? !isWholeByteSize(v) : !Number.isInteger(v)) {
    throw new RangeError(
      `Worker option memoryLimit must be a whole number of bytes, got ${showValue(v)}${typeof v === "number" ? " (Math.floor a computed size)" : ""}`,
    );
  }
  return n;
}

/**
 * A limit above the machine's memory lowered to it, as Dask's `parse_memory_limit`
 * does: the worker would never spill nor pause before the system's out-of-memory
 * killer ended it.
 */
function cappedMemoryLimit(
  asGiven: number | string | undefined,
  limit: number | null,
): Pick<ResolvedWorkerOptions, "memoryLimit" | "memoryLimitCapped"> {
  const machine = systemMemory();
  if (limit === null || asGiven === undefined || limit <= machine) {
    return { memoryLimit: limit, memoryLimitCapped: null };
  }
  return { memoryLimit: machine, memoryLimitCapped: { asGiven, machine } };
}

function fraction(name: string, v: number): number {
  if (!(typeof v === "number" && v > 0 && v <= 1)) {
    throw new RangeError(`Worker option ${name} must be a number in (0, 1], got ${showValue(v)}`);
  }
  return v;
}

function fractionOrFalse(name: string, v: number | false): number | false {
  if (v === false) return false;
  if (!(typeof v === "number" && v > 0 && v <= 1)) {
    throw new RangeError(
      `Worker option ${name} must be a number in (0, 1] or false, got ${showValue(v)}`,
    );
  }
  return v;
}

function memoryMeasure(v: MemoryMeasure | undefined): MemoryMeasure {
  if (v === undefined) return "managed";
  if (v === "managed" || v === "process" || typeof v === "function") return v;
  throw new RangeError(
    `Worker option memoryMeasure must be "managed", "process" or a function giving bytes, got ${showValue(v)}`,
  );
}

function spillDirectory(v: string | undefined): string {
  if (v === undefined) return tmpdir();
  if (typeof v !== "string" || v === "" || !existsSync(v)) {
    throw new RangeError(`Worker option spillDirectory: no such directory: ${JSON.stringify(v)}`);
  }
  // A file there would fail every spill: each value would stay in memory, the worker
  // pausing and closing for values it was to write to disk.
  if (!statSync(v).isDirectory()) {
    throw new RangeError(`Worker option spillDirectory: not a directory: ${JSON.stringify(v)}`);
  }
  return resolve(v);
}
