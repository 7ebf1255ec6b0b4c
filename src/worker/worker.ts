/**
 * The worker: the shell around the worker state machine. It registers with the
 * scheduler and turns its messages into events, runs tasks on an executor,
 * fetches missing inputs from peers with `get_data`, serves its own data to
 * peers, and sends the state machine's messages back to the scheduler over a
 * batched stream.
 *
 * This file is the `Worker` facade and its life: starting, the stream from the
 * scheduler, pausing, closing, and the rpcs it answers. Each part is a module
 * of its own, given what it needs of the worker through a narrow host
 * interface: registration.ts (the handshake), taskExecutors.ts and
 * taskRunner.ts (running tasks, and `run`), gatherDep.ts and peerPool.ts
 * (fetching from peers), dataServer.ts and updateData.ts (serving and taking
 * data), actorServer.ts, clusterCode.ts (uploads, task modules, plugins),
 * introspection.ts (logs, dumps, stories, profiles), workerMemory.ts (spilling
 * and the memory monitor), retirement.ts (`closeGracefully`) and
 * metricTotals.ts.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { Client } from "../client/client.ts";
import { BatchedSend } from "../comm/batchedSend.ts";
import { logBrokenConnection } from "../comm/brokenConnection.ts";
import { type Comm, commOptionsOf, type Listener } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { isDataError } from "../comm/errors.ts";
import { forEachMessage } from "../comm/forEachMessage.ts";
import type { HttpEndpoints } from "../comm/httpEndpoints.ts";
import { serveRpc } from "../comm/rpc.ts";
import { limitSendsToScheduler } from "../protocol/messagesSession.ts";
import type { ProfileDiscardMsg } from "../protocol/messagesWorker.ts";
import { protocolMismatch } from "../protocol/version.ts";
import { asError } from "../util/asError.ts";
import { CloseBudget, DEFAULT_CLOSE_TIMEOUT_S } from "../util/closeBudget.ts";
import { closeTimeoutError } from "../util/closeTimeout.ts";
import { LogRecords } from "../util/logRecords.ts";
import { manyListenersAbortController } from "../util/manyListenersAbort.ts";
import { type PreloadTeardown, startServerPreloads } from "../util/preload.ts";
import { StartSteps } from "../util/startSteps.ts";
import { StartWatch } from "../util/startWatch.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { wallSeconds } from "../util/wallClock.ts";
import { ActorHandleGuard, feedGuarded } from "./actorHandleGuard.ts";
import { ActorServer } from "./actorServer.ts";
import { type AsyncInstructionContext, BaseWorker, type MetricName } from "./baseWorker.ts";
import { ClusterCode } from "./clusterCode.ts";
import { contactAddressFor } from "./contactAddress.ts";
import { DataServer } from "./dataServer.ts";
import { wireErrorMessage } from "./executor.ts";
import { type GatherHost, gatherFromPeer, transferCause } from "./gatherDep.ts";
import type { WorkerIdentity } from "./identity.ts";
import { Introspection } from "./introspection.ts";
import { LostSpills } from "./lostSpills.ts";
import type { MemoryMonitor } from "./memoryMonitor.ts";
import { MetricTotals } from "./metricTotals.ts";
import { type PauseChange, PauseReasons, pauseChangeOutputs } from "./pauseReasons.ts";
import { PeerPool } from "./peerPool.ts";
import { refuseOnPoolThread } from "./poolThreadMark.ts";
import { CpuProfiler } from "./profiler.ts";
import { type RegisterWorkerReply, registerWithScheduler } from "./registration.ts";
import { askToBeRetired } from "./retirement.ts";
import { schedulerMessageToEvent } from "./schedulerEvents.ts";
import type { SpilledValueLostError } from "./spilledValueLost.ts";
import type { SpillStats, SpillStore } from "./spillStore.ts";
import { StartDeadline } from "./startDeadline.ts";
import { FindMissingEvent, RetryBusyWorkerEvent, type StateMachineEvent } from "./state/events.ts";
import { RescheduleMsg, toMessage } from "./state/instructions.ts";
import { DEFAULT_DATA_SIZE } from "./state/taskState.ts";
import { WorkerState } from "./state/workerState.ts";
import { TaskExecutors } from "./taskExecutors.ts";
import { TaskRunner } from "./taskRunner.ts";
import { CollectWhenIdle, collectGarbageOnDemand } from "./throttledGc.ts";
import { inPlaceOfUnsent } from "./unsentToScheduler.ts";
import { updateDataHandler } from "./updateData.ts";
import {
  memoryMonitorFor,
  refuseMemoryLimitTooSmall,
  refuseUnwritableSpillDirectory,
  spillStoreFor,
  warnMemoryLimitCapped,
  warnMemoryOrder,
} from "./workerMemory.ts";
import {
  type ResolvedWorkerOptions,
  resolveWorkerOptions,
  type WorkerOptions,
} from "./workerOptions.ts";
import { type WorkerPluginHooks, WorkerPlugins } from "./workerPlugins.ts";

/** Where a worker is in its life. */
export type WorkerStatus =
  | "init"
  | "starting"
  | "running"
  | "paused"
  | "closing"
  | "closed"
  | "failed";

/** A stimulus id with Dask's shape: `prefix-<wall-clock seconds>`. */
const stimulusId = newStimulusId;

/** The real worker: executor, data store, `get_data` server, peer gathering, scheduler stream. */
export class Worker extends BaseWorker {
  /** The options, defaults filled in. */
  readonly options: ResolvedWorkerOptions;
  /**
   * Where the worker logs (the `logger` option, or a pino logger named `weft.worker`),
   * its last records kept for `Client.getWorkerLogs`.
   */
  readonly logger: Logger;
  private statusValue: WorkerStatus = "init";
  /** The executors task code runs on, and the modules loaded into them. */
  private readonly executors: TaskExecutors;
  /** Aborted as the worker closes: see {@link closing}. */
  private readonly closer = manyListenersAbortController();
  /** The client of task code on the main thread (`getClient()`), once asked for. */
  private taskClientPromise: Promise<Client> | null = null;
  /** That client once connected: task code that closed it gets another (see `taskClient`). */
  private taskClientValue: Client | null = null;
  /**
   * Futures that code on the main thread (inline tasks) let go of, released by a
   * collection once the worker is quiet: V8 collects on allocation, and until
   * then they held their results on the cluster (a pool thread's are its own).
   */
  private readonly letGoFutures = new CollectWhenIdle(
    () => (this.taskClientValue?.keyCount ?? 0) > 0,
    collectGarbageOnDemand((msg, ms) => this.logger.warn({ ms }, msg)),
  );
  /** Keeps a handle to an actor from being taken for the actor (see actorHandleGuard.ts). */
  private readonly actorGuard = new ActorHandleGuard(this.state);
  /** Serves `actor_execute` and `actor_attribute`. */
  private readonly actorServer: ActorServer;
  /** The worker plugins clients registered (`plugin_add`, and the cluster's as it registers). */
  private readonly plugins = new WorkerPlugins<Worker>(this.state.plugins, this, (name, err) =>
    this.logger.error({ err, plugin: name }, "worker plugin teardown failed (replaced)"),
  );
  /** The steps of {@link start}, which a {@link close} meanwhile ends. */
  private readonly starting = new StartSteps(CLOSED_WHILE_STARTING, (err) =>
    this.logger.error({ err: asError(err) }, "closing what the start made after close() failed"),
  );
  /** The start under way ({@link start}) and the step it is in, null before and after it. */
  private startWatch: StartWatch | null = null;
  /** Undoes the preload modules (their `weftTeardown`s), once they ran. */
  private preloadTeardown: PreloadTeardown | null = null;
  /** Loads what clients load into the cluster: uploads, task modules, plugins. */
  private readonly code: ClusterCode;
  private listener: Listener | null = null;
  /** The HTTP endpoints, with `httpAddress`. */
  private http: HttpEndpoints | null = null;
  private schedulerComm: Comm | null = null;
  private stream: BatchedSend | null = null;
  private readonly peers: PeerPool;
  /** What fetching inputs from the peers needs (see gatherDep.ts). */
  private readonly gatherHost: GatherHost;
  /** Answers `get_data`; its counters tell the outgoing transfers. */
  readonly dataServer: DataServer;
  /** Runs the tasks and `run` calls. */
  private readonly runner: TaskRunner;
  /** CPU profiles of this worker's threads, on demand (`Client.profile`). */
  private readonly profiler = new CpuProfiler(
    () => this.executors.main?.threadIds?.() ?? [],
    undefined,
    (id, owner) => this.introspection.profileEnded(id, owner),
  );
  /** Answers the rpcs that look into this worker (logs, dump, story, profiles). */
  private readonly introspection: Introspection;
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private readonly servedComms = new Set<Comm>();
  /** The totals of the metrics digested so far. */
  private readonly metricTotals = new MetricTotals();
  /** The data store when it spills to disk (`memoryLimit`), else null. */
  private readonly spill: SpillStore | null;
  /** Acts on the worker's memory (`memoryLimit` and a threshold set), else null. */
  private readonly memory: MemoryMonitor | null;
  /** The spilled values found gone from disk, until the state machine drops them. */
  private readonly lostSpills: LostSpills;
  /** Why the worker is paused: the scheduler (retiring it), its memory, or both. */
  private readonly pauses = new PauseReasons();
  private closePromise: Promise<string[]> | null = null;
  private faultValue: string | null = null;
  /** Its state machine threw (Dask's `fail_hard`): the close ends in status `failed`. */
  private stateMachineFailed = false;
  private restartRequestedValue = false;
  /**
   * The scheduler sent `close-worker`: it then closes the connection itself once its
   * `closeWorkerGraceMs` is over (or as it shuts down), which is no fault here.
   */
  private toldToClose = false;
  /**
   * The error a send to the scheduler failed with, logged then: the stream's end closes
   * the connection with it, which the read side then meets too, the same failure.
   */
  private sendFailure: unknown = null;
  /** {@link closeGracefully} under way. */
  private gracefulClose: Promise<void> | null = null;
  private markClosed: () => void = () => {};
  /** Resolves once the worker has closed, whether by {@link close} or on a {@link fault}. */
  readonly closed: Promise<void> = new Promise((resolve) => {
    this.markClosed = resolve;
  });

  constructor(options: WorkerOptions) {
    const o = resolveWorkerOptions(options);
    const logRecords = new LogRecords(o.logLength);
    const logger = logRecords.wrap(o.logger);
    const spill = spillStoreFor(o, logger);
    super(
      new WorkerState({
        ...(spill !== null ? { data: spill } : {}),
        nthreads: o.nthreads,
        resources: o.resources,
        validate: o.validate,
        transferIncomingCountLimit: o.transferIncomingCountLimit,
        // No more per request than this worker can receive in one message: a peer refuses
        // a larger answer (get_data carries the limit), which would fail every key of it.
        transferMessageBytesLimit: Math.min(o.transferMessageBytesLimit, o.maxMessageBytes),
        transferIncomingBytesLimit: o.transferIncomingBytesLimit,
        clock: wallSeconds,
        monotonic: () => performance.now() / 1000,
        errorMessage: wireErrorMessage,
        onPluginError: (name, err) => logger.error({ err, plugin: name }, "worker plugin failed"),
      }),
    );
    this.options = o;
    this.logger = logger;
    this.spill = spill;
    this.lostSpills = new LostSpills({
      state: this.state,
      logger,
      isLost: (key) => spill?.isLost(key) ?? false,
      handleStimulus: (...stims) => this.handleStimuli(stims),
      reschedule: (keys, sid) => {
        for (const key of keys) this.batchedSend(toMessage(new RescheduleMsg(key, sid)));
      },
      holdsClient: (key) => this.runner.holdsClient(key),
      heldMs: o.lostInputHeldMs,
    });
    this.executors = new TaskExecutors(o, logger, () => this.address);
    this.memory =
      spill === null
        ? null
        : memoryMonitorFor(o, spill, {
            logger,
            collectThreadGarbage: () => this.executors.main?.collectGarbage?.(),
            setPaused: (paused) => this.changePause(this.pauses.memory(paused)),
            terminate: (why) => this.closeOnFault(why),
          });
    this.code = new ClusterCode({
      acceptUploads: o.acceptUploads,
      logger,
      executors: this.executors,
      plugins: this.plugins,
      nannyLink: o.nannyLink,
      status: () => this.statusValue,
      address: () => this.address,
      restartForNanny: (plugin) => this.restartForNanny(plugin),
    });
    this.introspection = new Introspection({
      state: this.state,
      options: o,
      logRecords,
      profiler: this.profiler,
      status: () => this.statusValue,
      tellScheduler: (msg) => this.batchedSend(msg),
    });
    this.runner = new TaskRunner(
      {
        state: this.state,
        logger,
        executors: this.executors,
        handleStimulus: (...stims) => this.handleStimulus(...stims),
        taskClient: this.taskClient,
        clientRunEnded: () => this.letGoFutures.soon(),
        status: () => this.statusValue,
        spilledInputLost: (err, key) => this.lostSpills.verdict(err, key),
      },
      o.nthreads,
    );
    this.peers = new PeerPool({
      connectTimeoutMs: o.connectTimeoutMs,
      ...commOptionsOf(o),
      logger,
    });
    this.gatherHost = {
      peers: this.peers,
      logger,
      address: () => this.address,
      now: () => this.now(),
      wallNow: wallSeconds,
      transferred: (keys, ss) => transferCause(this.state, keys)?.addStartStop(ss),
      nbytesOf: (key) => this.state.tasks.get(key)?.getNbytes() ?? DEFAULT_DATA_SIZE,
    };
    this.dataServer = new DataServer(this, o.transferOutgoingCountLimit);
    this.actorServer = new ActorServer({ state: this.state, taskClient: this.taskClient });
  }

  private throwIfClosedWhileStarting(): void {
    if (this.closePromise !== null) throw new Error(CLOSED_WHILE_STARTING);
  }

  /** Create a worker and {@link start} it. */
  static async create(options: WorkerOptions): Promise<Worker> {
    return new Worker(options).start();
  }

  /** Where the worker is in its life. */
  get status(): WorkerStatus {
    return this.statusValue;
  }

  /**
   * Aborted as the worker closes, as `Scheduler.closing`: what a plugin or preload
   * dials meanwhile (`Client.connect(address, { signal: worker.closing })`) ends
   * with the close, not at its timeout, which held a worker in a program that long.
   */
  get closing(): AbortSignal {
    return this.closer.signal;
  }

  /**
   * What {@link start} is doing while the worker starts (`running its preload
   * modules' weftSetup (…)`, `registering with the scheduler at …`), said by
   * a start that times out; null before `start()` and once it settled.
   */
  get startStep(): string | null {
    return this.startWatch?.doing ?? null;
  }

  /**
   * Why the worker closed itself, null while it has not (or was closed by a
   * {@link close} call): its state machine failed, or it lost the scheduler.
   * Such a worker is not coming back; a supervisor may start another
   * (LocalCluster does).
   */
  get fault(): string | null {
    return this.faultValue;
  }

  /**
   * True once the scheduler told this worker to close for a restart (of the
   * cluster, `client.restart()`, or of this worker, `client.restartWorkers()`),
   * or it closes gracefully to be restarted (its lifetime is over, with
   * `lifetimeRestart`), or a nanny plugin restarts it (`registerNannyPlugin`):
   * not a fault; its nanny, if it has one (`nanny` option), starts another
   * worker in its place.
   */
  get restartRequested(): boolean {
    return this.restartRequestedValue;
  }

  /** True while paused: by the scheduler (retiring it), or for memory. */
  get isPaused(): boolean {
    return this.statusValue === "paused";
  }

  /** True while the memory monitor holds the worker paused (see `memoryPause`). */
  get isPausedForMemory(): boolean {
    return this.pauses.pausedForMemory;
  }

  /** A `get_data` found a spilled value gone from disk: the worker drops the key (see lostSpills.ts). */
  valueLost(err: SpilledValueLostError): void {
    this.lostSpills.lost(err);
  }

  /**
   * Whether a peer's `get_data` of a value found lost is to fail with the loss:
   * once only tasks here that may be waiting for the peer's hold it (see lostSpills.ts).
   */
  failsPeer(err: SpilledValueLostError): boolean {
    return this.lostSpills.failsPeer(err);
  }

  /** Where the HTTP endpoints are (`http://host:port`), null without `httpAddress`. */
  get httpUrl(): string | null {
    return this.http?.url ?? null;
  }

  /**
   * Add a worker plugin here (Dask's `Worker.plugin_add`; see `WorkerPluginHooks`),
   * as a client's `registerWorkerPlugin` does on every worker: one of that name is
   * torn down first (a teardown that throws is logged, and this one set up all
   * the same); `setup(worker)` is awaited, and if it throws the plugin is not
   * kept. For preload modules (`weftSetup(worker)`) and programs embedding a worker.
   */
  addPlugin(plugin: WorkerPluginHooks<Worker>, name: string): Promise<void> {
    return this.plugins.add(name, plugin);
  }

  /** Remove the worker plugin `name`, awaiting its teardown: false if there is none. */
  removePlugin(name: string): Promise<boolean> {
    return this.plugins.remove(name);
  }

  /** The names of the worker plugins, in the order added. */
  get pluginNames(): string[] {
    return this.plugins.names;
  }

  /** The worker's address, as peers and the scheduler know it. */
  get address(): string {
    return this.state.address;
  }

  /** The names of the task functions this worker can run (its task modules' `defineTask`s), once started. */
  get taskNames(): readonly string[] {
    return this.executors.main?.taskNames ?? [];
  }

  /** The executor's kind (`"inline"` or `"piscina"`). */
  get executorKind(): string {
    return this.options.executor;
  }

  /** Totals of the metrics digested so far, by metric name as JSON (`["execute",null,"inc","thread","seconds"]`). */
  get metrics(): ReadonlyMap<string, number> {
    return this.metricTotals.toMap();
  }

  /**
   * Start the executor, listen for peers, register with the scheduler and
   * start the periodic callbacks. On failure everything started is closed and
   * the error is thrown. A {@link close} before it is done makes it reject at
   * once with "the worker was closed while starting", even while a step never
   * ends (a preload's `weftSetup`, a plugin's `setup`, a scheduler or nanny
   * that does not answer): the close stops what it started (waiting on such a
   * step up to its timeout), and what a step makes after it is closed too.
   * Not closed, a step is waited on as long as it takes (up to `deathTimeoutMs`,
   * if given), warned of once after 10 s, and failed when nothing is left to
   * run while it waits (see `StartWatch`).
   */
  async start(): Promise<this> {
    refuseOnPoolThread("Worker.start", this);
    if (this.statusValue !== "init")
      throw new Error(`cannot start a worker that is ${this.statusValue}`);
    this.statusValue = "starting";
    const o = this.options;
    const watch = new StartWatch("worker", this.logger);
    const deadline = new StartDeadline(
      o.startTimeoutMs,
      () => void this.close(),
      () => watch.doing,
    );
    this.startWatch = watch;
    try {
      // Raced: a step waiting on nothing (a plugin's setup on the cluster in this process
      // that waits on this start) fails the start; the close below ends the step.
      await Promise.race([this.startSteps(watch, deadline), watch.stalled]);
    } catch (err) {
      const timedOut = deadline.timedOut;
      deadline.clear();
      watch.clear();
      this.startWatch = null;
      // Closed by the deadline: as a close meanwhile, the start does not wait for what it cut short.
      if (timedOut !== null) throw new Error(timedOut, { cause: err });
      // close() meanwhile stops what was started, within its timeout; the step it cut
      // short may never end, so the start does not wait for it.
      if (this.starting.isStopped) throw err;
      if (watch.hasStalled) this.plugins.inProgressStalled();
      await this.close();
      this.statusValue = "failed";
      throw err;
    }
    deadline.clear();
    watch.clear();
    this.startWatch = null;
    this.statusValue = "running";
    if (this.schedulerComm !== null) void this.readSchedulerStream(this.schedulerComm);
    // Its nanny set up a plugin of the register reply that restarts the worker (a
    // new nanny: one it started again had them all already).
    const restartFor = this.code.restartDue;
    if (restartFor !== null) this.restartForNanny(restartFor);
    if (o.lifetimeMs !== null) this.scheduleLifetime(o.lifetimeMs, o.lifetimeStaggerMs);
    this.every(o.heartbeatIntervalMs, () => this.heartbeat());
    this.every(o.findMissingIntervalMs, () => this.findMissing());
    if (this.memory !== null) {
      const monitor = this.memory;
      this.every(o.memoryMonitorIntervalMs, () => monitor.check());
    }
    this.logger.info(
      { address: this.address, nthreads: o.nthreads, executor: o.executor },
      "worker started",
    );
    if (o.taskModules.length > 0 && this.taskNames.length === 0) {
      // A module that defines nothing (the wrong file, or its defineTask calls are
      // in a module it does not import): the registry is one per thread, whichever
      // copy of weft (or CommonJS require of it) a module calls defineTask from.
      this.logger.warn(
        { taskModules: o.taskModules },
        "the task modules define no task functions: every task will fail as unknown " +
          "(do they call defineTask, or import a module that does?)",
      );
    }
    return this;
  }

  /** The steps of {@link start}, each told to `watch` as it begins. */
  private async startSteps(watch: StartWatch, deadline: StartDeadline): Promise<void> {
    const o = this.options;
    // Each step may wait on code or a peer that never answers (a task module's import, a
    // weftSetup, a plugin's setup, the scheduler, the nanny): close() ends it at once.
    watch.doing = `starting its executor, which imports its task modules (${o.taskModules.join(", ") || "none"})`;
    await this.starting.step(
      () => this.executors.start(),
      (late) => late.close(),
    );
    this.code.startModulesImported(o.taskModules);
    refuseMemoryLimitTooSmall(this.memory, o, this);
    refuseUnwritableSpillDirectory(o);
    warnMemoryLimitCapped(o, this.logger);
    warnMemoryOrder(o, this.logger);
    watch.doing = `listening at ${o.listen}`;
    this.listener = await this.starting.step(
      () =>
        listen(o.listen, (comm) => this.servePeer(comm), {
          ...commOptionsOf(o),
          onRefusedPeer: (peer, reason) =>
            this.logger.warn({ peer, reason }, "refused a TLS connection"),
        }),
      (late) => late.close(),
    );
    this.state.address = o.contactAddress ?? contactAddressFor(this.listener.address);
    const httpAddress = o.httpAddress;
    if (httpAddress !== null) {
      watch.doing = `starting its HTTP endpoints at ${httpAddress}`;
      this.http = await this.starting.step(
        async () => {
          // Loaded only to serve: its metrics (prom-client), pages and routes are some 0.1 s
          // of CPU at every start, and most processes serve no HTTP.
          const { startWorkerHttp } = await import("./httpEndpoints.ts");
          return startWorkerHttp(this, httpAddress, o.metricsNamespace);
        },
        (late) => late.close(),
      );
    }
    watch.doing = `running its preload modules' weftSetup (${o.preload.join(", ")})`;
    await this.starting.step(() => {
      const preloads = startServerPreloads(o.preload, this, this.logger, watch);
      this.preloadTeardown = preloads.teardown;
      return preloads.setUp;
    });
    await this.register(watch, deadline);
  }

  /** Carry out a change of the reasons the worker is paused (the memory monitor's). */
  private changePause(change: PauseChange): void {
    if (this.statusValue !== "running" && this.statusValue !== "paused") return;
    const { tell, feed } = pauseChangeOutputs(change, stimulusId("worker-status-change"));
    if (tell !== null) this.batchedSend({ ...tell });
    if (feed === null) return;
    this.statusValue = feed.cls === "PauseEvent" ? "paused" : "running";
    this.handleStimulus(feed);
  }

  /** Retire once `lifetimeMs`, give or take up to `staggerMs` at random, has passed. */
  private scheduleLifetime(lifetimeMs: number, staggerMs: number): void {
    const ms = Math.max(0, lifetimeMs + (Math.random() * 2 - 1) * staggerMs);
    this.after(ms, () => {
      void this.closeGracefully("worker-lifetime-reached");
    });
  }

  /**
   * Call `fn` in `ms`, however long: the stagger may take a lifetime past what one
   * Node.js timer waits (about 24.8 days; a longer one fires after 1 ms).
   */
  private after(ms: number, fn: () => void): void {
    const t = setTimeout(
      () => (ms > MAX_TIMER_MS ? this.after(ms - MAX_TIMER_MS, fn) : fn()),
      Math.min(ms, MAX_TIMER_MS),
    );
    t.unref();
    this.timers.push(t);
  }

  /**
   * Leave the cluster without losing results (Dask's `close_gracefully`): ask
   * the scheduler to retire this worker, which copies the results only it
   * holds to other workers and then tells it to close. While no other worker
   * can take them (they are starting, or leaving too), it asks again every
   * second, for up to a minute; then, or if the retirement fails otherwise
   * (an actor lives here), it closes anyway, as Dask's does at once: results
   * only it held are computed again where needed, scattered ones are lost.
   * With `restart` (default: the `lifetimeRestart` option) it closes as
   * restarted, for its nanny to start another. Resolves once closed; a
   * second call waits for the first.
   */
  closeGracefully(
    reason = "worker-close-gracefully",
    restart = this.options.lifetimeRestart,
  ): Promise<void> {
    this.gracefulClose ??= this.leaveGracefully(reason, restart);
    return this.gracefulClose;
  }

  private async leaveGracefully(reason: string, restart: boolean): Promise<void> {
    if (this.statusValue !== "running" && this.statusValue !== "paused") {
      // Not in the cluster (yet, or any more): nothing to hand over.
      await this.close();
      return;
    }
    this.logger.info({ reason }, "closing gracefully: the scheduler retires this worker");
    if (restart) this.restartRequestedValue = true;
    await askToBeRetired({
      logger: this.logger,
      address: this.address,
      taskClient: this.taskClient,
      closing: () => this.closePromise !== null,
    });
    await this.close();
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  /** Register with the scheduler (see registration.ts), and take what its answer gives. */
  private async register(watch: StartWatch, deadline: StartDeadline): Promise<void> {
    watch.enterLoggingItsOwnWait(`registering with the scheduler at ${this.options.scheduler}`);
    const { comm, reply } = await this.starting.step(
      () =>
        // Its waits end themselves, each with its own error: see StartDeadline.
        deadline.exemptWhile(() =>
          registerWithScheduler({
            options: this.options,
            logger: this.logger,
            address: this.address,
            // Bounding the whole start, deathTimeoutMs counts from its call; else from the first try.
            ...(this.options.startTimeoutMs !== null ? { startedAt: deadline.startedAt } : {}),
            connected: (c) => {
              this.schedulerComm = c;
              // Connected after the close closed the one it knew: nobody else would.
              if (this.starting.isStopped) c.abort();
            },
            closing: () => this.closePromise !== null,
            throwIfClosed: () => this.throwIfClosedWhileStarting(),
            signal: this.starting.signal,
          }),
        ),
      (late) => late.comm.abort(),
    );
    await this.registered(comm, reply, watch);
  }

  /** Registered: take what the scheduler's answer gives, and start the stream. */
  private async registered(
    comm: Comm,
    reply: Partial<RegisterWorkerReply>,
    watch: StartWatch,
  ): Promise<void> {
    const o = this.options;
    // A scheduler older than the version check registers any worker: leave it here.
    const mismatch = protocolMismatch(`the scheduler at ${o.scheduler}`, "this worker", reply);
    if (mismatch !== null) throw new Error(mismatch);
    // A message over the scheduler's limit then fails here, saying so, rather than
    // the scheduler closing the connection on it.
    limitSendsToScheduler(comm, reply);
    // Before the first message is read: tasks may need them.
    await this.starting.step(() =>
      this.code.takeRegisterReply(reply, (doing) => {
        watch.doing = doing;
      }),
    );
    const stream = new BatchedSend(comm, {
      intervalMs: o.batchedSendIntervalMs,
      onError: (err) => this.cannotSendToScheduler(err),
      onMessageError: (err, msg) => {
        const standIns = inPlaceOfUnsent(msg, err);
        if (standIns.length > 0 && !stream.isClosed) {
          const op = (msg as { op: string }).op;
          this.logger[op === "task-erred" ? "warn" : "info"](
            { err, op },
            op === "task-erred"
              ? "a task's error is too large to send to the scheduler: sent its start"
              : "a message too large for the scheduler goes again in halves",
          );
          stream.send(...standIns);
          return;
        }
        // The scheduler waits for it: as if the stream had failed.
        stream.abort();
        comm.abort(asError(err));
        this.cannotSendToScheduler(err);
      },
    });
    this.stream = stream;
    this.introspection.streamStarted();
    // Read once running (start() does): a message read before would be dropped,
    // and the scheduler may send some (tasks to compute) as soon as it has this
    // worker, while the uploads and modules above are still loading.
  }

  private async readSchedulerStream(comm: Comm): Promise<void> {
    let why = "";
    try {
      await forEachMessage(comm, (frame) =>
        this.onSchedulerMessages(Array.isArray(frame) ? frame : [frame]),
      );
    } catch (err) {
      // Its own limits, not the scheduler, ended it: the one line a weft worker prints says so.
      const cause = isDataError(err) ? err : (err as Error).cause;
      const refused = isDataError(cause);
      if (refused) {
        why = `: ${(cause as Error).message} (give every process of the cluster the same --max-message-bytes and --max-frame-bytes)`;
      }
      // Told to close, this worker outlived the scheduler's grace (a slow or hung close)
      // or its shutdown: the scheduler closing the connection then is expected, and
      // over TLS, or with bytes in flight, it arrives as a reset rather than an end.
      if (this.toldToClose && !refused) {
        this.logger.info(
          { err },
          "the scheduler closed the connection while this worker, told to close, was still closing",
        );
      } else if (this.sendFailure !== null && sameFailure(err, this.sendFailure)) {
        // Said already, with its stack ("cannot send to the scheduler"): a worker
        // resuming from SIGSTOP, removed meanwhile, logged it twice at error.
        this.logger.debug({ err }, "the stream from the scheduler ended with the failed send");
      } else {
        // The scheduler killed or its machine gone: one line, the stack at debug.
        const peer = { scheduler: comm.peerAddress };
        logBrokenConnection(this.logger, "error", peer, err, "the stream from the scheduler broke");
      }
    }
    if (this.statusValue === "running" || this.statusValue === "paused") {
      this.logger.warn(
        { scheduler: this.options.scheduler },
        "lost the connection to the scheduler; closing",
      );
      this.closeOnFault(`lost the connection to the scheduler${why}`);
    }
  }

  /** Handle a batch of scheduler messages; malformed ones are logged and skipped. */
  private onSchedulerMessages(msgs: readonly unknown[]): void {
    if (this.statusValue !== "running" && this.statusValue !== "paused") return;
    const events: StateMachineEvent[] = [];
    for (const msg of msgs) {
      if (isCloseWorker(msg)) {
        this.toldToClose = true;
        // Retired (its data is held elsewhere) or restarted: the scheduler has removed this worker.
        if (msg.restart === true) {
          this.restartRequestedValue = true;
          this.logger.info(
            this.options.nanny
              ? "the scheduler restarts this worker; closing, for the nanny to start another"
              : "the scheduler restarts this worker; closing (no nanny will start it again)",
          );
        } else if (msg.reason === "scheduler-shutdown") {
          this.logger.info("the scheduler shuts the cluster down; closing");
        } else {
          this.logger.info({ reason: msg.reason }, "the scheduler retired this worker; closing");
        }
        if (events.length > 0) this.handleStimuli(events);
        void this.close();
        return;
      }
      // Not the state machine's: a profile whose client the scheduler removed.
      if (isProfileDiscard(msg)) {
        this.profiler.discard(msg.id);
        continue;
      }
      try {
        const ev = schedulerMessageToEvent(msg, this.state.totalResources);
        if (ev.cls === "PauseEvent" || ev.cls === "UnpauseEvent") {
          const change = this.pauses.scheduler(ev.cls === "PauseEvent");
          const { tell, feed } = pauseChangeOutputs(change, ev.stimulusId);
          if (tell !== null) this.batchedSend({ ...tell });
          if (feed === null) continue; // still paused for memory
          this.statusValue = feed.cls === "PauseEvent" ? "paused" : "running";
        } else if (ev.cls === "RemoveWorkerEvent") {
          // A peer the scheduler gave up on (gone silent, e.g. frozen) may never
          // answer a fetch in flight: end it as a network failure, so the inputs are
          // fetched from their other holders instead of waiting forever.
          const why = `${ev.worker} was removed from the cluster`;
          this.peers.remove(ev.worker, why);
          // And the connections of tasks' clients to it (an actor's method called):
          // the scheduler fails the task, but its run would never end, holding a thread.
          this.executors.peerLeft(ev.worker, why);
          void this.taskClientPromise?.then(
            (client) => client.dropPeer(ev.worker, why),
            () => {},
          );
        }
        events.push(ev);
      } catch (err) {
        const op =
          typeof msg === "object" && msg !== null ? (msg as { op?: unknown }).op : undefined;
        this.logger.error({ err, op }, "rejected a malformed message from the scheduler");
      }
    }
    if (events.length > 0) this.handleStimuli(events);
  }

  /**
   * Feed stimuli to the state machine. An exception from it is a bug that may
   * have left the state inconsistent: the worker logs it and closes (Dask's
   * `fail_hard`).
   */
  override handleStimuli(stims: readonly StateMachineEvent[]): void {
    if (
      this.statusValue === "closing" ||
      this.statusValue === "closed" ||
      this.statusValue === "failed"
    )
      return;
    try {
      // Through the guard: see actorHandleGuard.ts (a handle taken for its actor).
      feedGuarded(this.actorGuard, stims, (batch) => super.handleStimuli(batch));
      // A key lost from disk is dropped once the last task here that needs it is done.
      this.lostSpills.release();
    } catch (err) {
      this.logger.fatal(
        { err, stimuli: stims.slice(0, 20).map((s) => s.cls), count: stims.length },
        "worker state machine failed; closing",
      );
      this.faultValue ??= `its state machine failed: ${asError(err).message}`;
      this.stateMachineFailed = true;
      void this.close();
    }
  }

  /**
   * Close for the nanny to start a fresh worker process, which has what the
   * nanny plugin `plugin` changed (its environment), as Dask's nanny restarts
   * its worker for a plugin with `restart`: no fault, and no retirement (the
   * results only this worker held are computed again elsewhere).
   */
  private restartForNanny(plugin: string): void {
    if (this.closePromise !== null) return;
    this.restartRequestedValue = true;
    this.logger.info(
      { plugin },
      "a nanny plugin restarts this worker; closing, for the nanny to start another",
    );
    void this.close();
  }

  private cannotSendToScheduler(err: unknown): void {
    // Told to close, this worker is no longer one the scheduler hears (it removed it):
    // a send failing as the scheduler closes the connection loses nothing, and is
    // no fault to end the close with (a weft worker would exit 1, retired).
    if (this.toldToClose && !isDataError(err)) {
      this.logger.info(
        { err },
        "cannot send to the scheduler, which closed the connection while this worker, told to close, was still closing",
      );
      return;
    }
    this.sendFailure ??= err;
    this.logger.error({ err }, "cannot send to the scheduler; closing");
    this.closeOnFault(`cannot send to the scheduler: ${asError(err).message}`);
  }

  private closeOnFault(why: string): void {
    this.faultValue ??= why;
    void this.close();
  }

  private heartbeat(): void {
    if (this.stream === null || this.stream.isClosed) return;
    const spill = this.spill?.stats;
    const memory = this.memory?.memory ?? null;
    this.stream.send({
      op: "heartbeat-worker",
      ...(spill !== undefined
        ? { spilled: { keys: spill.spilledKeys, bytes: spill.spilledBytes } }
        : {}),
      ...(memory !== null ? { memory: Math.round(memory) } : {}),
      stimulusId: stimulusId("heartbeat"),
    });
  }

  private findMissing(): void {
    if (this.state.missingDepFlight.size === 0) return;
    this.handleStimulus(new FindMissingEvent({ stimulusId: stimulusId("find-missing") }));
  }

  /** Answers a client's `update_data` (its scatter). */
  private readonly updateData = updateDataHandler({
    state: this.state,
    refusal: () =>
      this.statusValue === "running" || this.statusValue === "paused"
        ? null
        : `the worker ${this.address} is ${this.statusValue}`,
    handleStimulus: (...stims) => this.handleStimuli(stims),
  });

  private servePeer(comm: Comm): void {
    if (this.statusValue === "closing" || this.statusValue === "closed") {
      comm.abort();
      return;
    }
    this.servedComms.add(comm);
    const handlers = {
      identity: this.identity,
      get_data: this.dataServer.getData,
      update_data: this.updateData,
      run: this.runner.runFunction,
      load_task_modules: this.code.loadTaskModules,
      upload_file: this.code.uploadFile,
      actor_execute: this.actorServer.execute,
      actor_attribute: this.actorServer.attribute,
      get_logs: this.introspection.getLogs,
      dump_state: this.introspection.dumpState,
      get_story: this.introspection.getStory,
      plugin_add: this.code.pluginAdd,
      plugin_remove: this.code.pluginRemove,
      nanny_plugin_add: this.code.nannyPluginAdd,
      nanny_plugin_remove: this.code.nannyPluginRemove,
      profile_start: this.introspection.profileStart,
      profile_stop: this.introspection.profileStop,
    };
    void serveRpc(comm, handlers, this.logger).finally(() => this.servedComms.delete(comm));
  }

  private readonly identity = (): WorkerIdentity => ({
    type: "Worker",
    id: this.address,
    name: this.options.name,
    scheduler: this.options.scheduler,
    nthreads: this.options.nthreads,
    memoryLimit: this.options.memoryLimit,
    maxMessageBytes: this.options.maxMessageBytes,
  });

  /**
   * The client of task code running on this worker's main thread (the inline
   * executor; a pool thread has its own): connected to the worker's
   * scheduler on the first `getClient()`, kept until the worker closes. One
   * that task code closed is replaced by a new one at the next call: it would
   * fail every later task (and the worker's retirement, and actors' calls).
   */
  private readonly taskClient = (): Promise<Client> => {
    if (this.statusValue === "closing" || this.statusValue === "closed") {
      return Promise.reject(new Error(`getClient(): the worker is ${this.statusValue}`));
    }
    if (this.taskClientValue?.isClosed === true) {
      this.taskClientValue = null;
      this.taskClientPromise = null;
    }
    this.taskClientPromise ??= (async () => {
      // Loaded on first use, and not at the top: the client's modules import the worker's.
      const { Client } = await import("../client/client.ts");
      const o = this.options;
      const client = await Client.connectForWorker(
        o.scheduler,
        {
          name: "worker-client",
          // What tasks print is for the user's clients, not for the worker's.
          printTaskOutput: false,
          timeoutMs: o.connectTimeoutMs,
          ...commOptionsOf(o),
          logger: this.logger.child({ name: "weft.worker-client" }),
        },
        this.address,
      );
      this.taskClientValue = client;
      return client;
    })().catch((err: unknown) => {
      this.taskClientPromise = null; // the next task asks again
      throw err;
    });
    return this.taskClientPromise;
  };

  override batchedSend(msg: Record<string, unknown>): void {
    const stream = this.stream;
    if (stream === null || stream.isClosed) {
      this.logger.debug({ op: msg.op }, "no stream to the scheduler; message dropped");
      return;
    }
    stream.send(msg);
  }

  override execute(
    key: string,
    stimId: string,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent | Promise<StateMachineEvent> {
    return this.runner.execute(key, stimId, ctx);
  }

  override gatherDep(
    worker: string,
    toGather: ReadonlySet<string>,
    totalNbytes: number,
    _stimulusId: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    return gatherFromPeer(this.gatherHost, worker, toGather, totalNbytes, ctx);
  }

  override async retryBusyWorkerLater(
    worker: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    await sleep(this.options.retryBusyWorkerDelayMs, undefined, { signal: ctx.signal });
    return new RetryBusyWorkerEvent({ worker, stimulusId: stimulusId("retry-busy-worker") });
  }

  override digestMetric(name: MetricName, value: number): void {
    this.metricTotals.add(name, value);
  }

  /**
   * Stop: no more connections or periodic callbacks; tear down the plugins, then
   * the preload modules (waiting up to `timeout` seconds on each group: one
   * still running then is logged at warn and no longer waited on); cancel the running
   * instructions (waiting up to `timeout` seconds; `Infinity`: until they end), flush and close the stream
   * to the scheduler, close peer connections and the executor. Returns the
   * names of the instructions still running after the timeout. Idempotent. Rejects
   * with a RangeError, closing nothing, for a `timeout` that is not a number ≥ 0.
   */
  override close(timeout = DEFAULT_CLOSE_TIMEOUT_S): Promise<string[]> {
    const refused = closeTimeoutError("Worker.close", timeout);
    if (refused !== null) return Promise.reject(refused);
    this.starting.stop();
    this.closePromise ??= this.shutdown(timeout);
    return this.closePromise;
  }

  private async shutdown(timeout: number): Promise<string[]> {
    // Closed before it ran (its start failed, or was cut short): it ends failed.
    const neverRan = this.statusValue === "starting";
    this.statusValue = "closing";
    this.closer.abort(new Error("the worker is closing"));
    this.code.workerClosing();
    // Its nanny SIGKILLs a process whose close never ends, and must know what it meant.
    // A link that throws must not end the close before it began: nothing would be closed.
    try {
      this.options.nannyLink?.closing?.({
        restart: this.restartRequestedValue,
        fault: this.faultValue !== null,
        startFailed: neverRan,
      });
    } catch (err) {
      this.logger.error({ err }, "closing: telling the nanny link failed; closing all the same");
    }
    for (const t of this.timers.splice(0)) clearInterval(t);
    // A close must finish, and most callers do not wait for it (`void this.close()`):
    // a step that fails is logged and the others still run, rather than the
    // rejection ending the process with the worker half closed.
    const step = async (what: string, run: () => unknown): Promise<void> => {
      try {
        await run();
      } catch (err) {
        this.logger.error({ err }, `closing: ${what} failed; closing the rest`);
      }
    };
    // A plugin's or preload's teardown that never ends must not keep the worker from closing.
    const plugins = new CloseBudget(timeout);
    await step("the worker plugins' teardown", () =>
      this.plugins.removeAll(
        (name, err) => this.logger.error({ err, plugin: name }, "worker plugin teardown failed"),
        plugins,
        (name, hook) =>
          this.logger.warn(
            { plugin: name },
            `worker plugin ${hook} did not finish within the close's timeout (${timeout} s): no longer waited on`,
          ),
      ),
    );
    plugins.clear();
    const preloads = new CloseBudget(timeout);
    await step("the preload modules' teardown", () => this.preloadTeardown?.(preloads));
    preloads.clear();
    await step("the listener", () => this.listener?.close());
    await step("the HTTP endpoints", () => this.http?.close());
    let stuck: string[] = [];
    await step("the running instructions", async () => {
      stuck = await super.close(timeout);
    });
    this.runner.close();
    try {
      if (this.stream !== null) await this.stream.close();
      // A registration cut short has nothing to flush, and a scheduler that never
      // answered may never close its side: an orderly close would wait for it.
      else this.schedulerComm?.abort();
    } catch (err) {
      this.logger.debug({ err }, "error closing the scheduler stream");
    }
    const client = await this.taskClientPromise?.catch(() => null);
    this.letGoFutures.cancel();
    await client?.close().catch(() => {});
    await step("the peer connections", () => this.peers.closeAll());
    for (const comm of this.servedComms) comm.abort();
    await step("the profiler", () => this.profiler.close());
    await step("the executors", () => this.executors.close());
    await step("the spill store", () => this.spill?.close());
    // Set before `closed` resolves: whoever waits on it reads the final status.
    this.statusValue = this.stateMachineFailed || neverRan ? "failed" : "closed";
    this.logger.info({ address: this.safeAddress() }, "worker closed");
    this.markClosed();
    return stuck;
  }

  /** Where task values are, with `memoryLimit`: in memory or spilled to disk, and the spills so far; else null. */
  get spillStats(): SpillStats | null {
    return this.spill?.stats ?? null;
  }

  private safeAddress(): string | null {
    try {
      return this.state.address;
    } catch {
      return null;
    }
  }
}

const CLOSED_WHILE_STARTING = "the worker was closed while starting";

/** True for the scheduler's `close-worker` (not an event of the state machine). */
function isCloseWorker(
  msg: unknown,
): msg is { op: "close-worker"; reason?: unknown; restart?: unknown } {
  return typeof msg === "object" && msg !== null && (msg as { op?: unknown }).op === "close-worker";
}

function isProfileDiscard(msg: unknown): msg is ProfileDiscardMsg {
  return (
    typeof msg === "object" &&
    msg !== null &&
    (msg as { op?: unknown }).op === "profile-discard" &&
    typeof (msg as { id?: unknown }).id === "string"
  );
}

/** Whether the read side's error is the send's failure (or wraps it), already logged. */
function sameFailure(err: unknown, sendFailure: unknown): boolean {
  return err === sendFailure || (err instanceof Error && err.cause === sendFailure);
}
