/**
 * The scheduler server: a thin shell around `SchedulerState`. It listens on a
 * transport address, accepts workers (`register-worker`, then their batched
 * stream) and clients (`register-client`, then theirs), turns what they send
 * into stimuli, and routes the messages the state machine returns over
 * batched streams. A worker whose connection ends, or that stops
 * heartbeating, is removed from the state machine.
 *
 * ```ts
 * const scheduler = await Scheduler.start({ listen: "tcp://0.0.0.0:8786" });
 * // workers: new Worker({ scheduler: scheduler.address, ... })
 * // clients: await Client.connect(scheduler.address)
 * await scheduler.close();
 * ```
 */

import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { type Comm, commOptionsOf, type Listener } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { isNetworkError } from "../comm/errors.ts";
import type { HttpEndpoints } from "../comm/httpEndpoints.ts";
import type {
  NannyPluginSpec,
  SchedulerCounters,
  SchedulerFailedMsg,
  WorkerPluginSpec,
} from "../protocol/messagesSession.ts";
import type { UploadedFile } from "../protocol/uploads.ts";
import { asError } from "../util/asError.ts";
import { CloseBudget, DEFAULT_CLOSE_TIMEOUT_S } from "../util/closeBudget.ts";
import { closeTimeoutError } from "../util/closeTimeout.ts";
import { LogRecords } from "../util/logRecords.ts";
import { manyListenersAbortController } from "../util/manyListenersAbort.ts";
import { type PreloadTeardown, startServerPreloads } from "../util/preload.ts";
import { showValue } from "../util/showValue.ts";
import { StartSteps } from "../util/startSteps.ts";
import { StartWatch } from "../util/startWatch.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { wallSeconds as now } from "../util/wallClock.ts";
import { CpuProfiler } from "../worker/profiler.ts";
import { AmmControl } from "./ammControl.ts";
import { ClientProfiles } from "./clientProfiles.ts";
import { serveClient } from "./clientSession.ts";
import { Coordination } from "./coordination/coordination.ts";
import {
  leaseBlockedGapMs,
  leaseRefreshIntervalMs,
  MONOTONIC_CLOCK,
} from "./coordination/leases.ts";
import { Counters } from "./counters.ts";
import { EventBroker, logWorkerEvent } from "./events.ts";
import { answerIdentity, type SchedulerIdentity } from "./identity.ts";
import { IdleWatch } from "./idleWatch.ts";
import { malformedReportStandIn } from "./malformedReport.ts";
import { Metadata } from "./metadata.ts";
import { type SchedulerPlugin, SchedulerPlugins } from "./plugins.ts";
import { PubSubBroker } from "./pubsub.ts";
import { Router } from "./router.ts";
import { SchedulerCode } from "./schedulerCode.ts";
import {
  type ResolvedSchedulerOptions,
  resolveSchedulerOptions,
  type SchedulerOptions,
} from "./schedulerOptions.ts";
import type { SessionHost } from "./sessionHost.ts";
import type { SchedulerEvent } from "./state/events.ts";
import { SchedulerState } from "./state/schedulerState.ts";
import { mayBalance } from "./state/workStealing.ts";
import { StimulusRunner } from "./stimulusRunner.ts";
import { TaskStream } from "./taskStream.ts";
import { WorkerClients } from "./workerClients.ts";
import { logWorkerLoss, workerLoss } from "./workerLoss.ts";
import { serveWorker } from "./workerSession.ts";
import { blockedGapMs, silentWorkers, ttlCheckIntervalMs } from "./workerTtl.ts";

/** Where a scheduler server is in its life. */
export type SchedulerStatus = "init" | "running" | "closing" | "closed" | "failed";

const HANDSHAKE_TIMEOUT = Symbol("handshake timeout");

/**
 * How long a close waits for the streams to workers and clients to send what
 * they hold, in seconds: then every connection is cut. A peer that does not
 * read (a client frozen, or not reading its answers) held the close until its
 * stall timeout, a minute per 16 MiB waiting for it (40 answers of 1 MiB: 149 s).
 * A stream's close also waits for the peer to close its end (a frozen peer whose
 * kernel took everything does not): the same bound covers that. A close given a
 * shorter timeout waits that long at most, as a worker's close bounds its waits;
 * a longer one is for the teardowns (plugins, preloads), not for a peer not reading.
 */
export const STREAMS_FLUSH_S = 5;

/** The scheduler server. */
export class Scheduler implements SessionHost {
  /**
   * The scheduler's ID, `Scheduler-<uuid>` (Dask's): its `identity` answer and its
   * scheduler file say it.
   */
  readonly id = `Scheduler-${randomUUID()}`;
  readonly options: ResolvedSchedulerOptions;
  readonly state: SchedulerState;
  readonly logger: Logger;
  readonly counters = new Counters();
  readonly taskModules: string[] = [];
  readonly uploads: UploadedFile[] = [];
  readonly workerPlugins: WorkerPluginSpec[] = [];
  readonly nannyPlugins: NannyPluginSpec[] = [];
  readonly router: Router;
  readonly taskStream: TaskStream;
  /** The last records the scheduler logged, for `client.getSchedulerLogs`. */
  readonly logRecords: LogRecords;
  readonly coordination: Coordination = new Coordination(
    (client, requestId, result) => this.router.toClient(client, { op: "reply", requestId, result }),
    MONOTONIC_CLOCK,
    (fields, msg) => this.logger.warn(fields, msg),
  );
  readonly runner: StimulusRunner;
  readonly events: EventBroker;
  readonly pubsub: PubSubBroker = new PubSubBroker((client, name, msg) =>
    this.router.toClient(client, { op: "pubsub-msg", name, msg }),
  );
  readonly metadata = new Metadata();
  /** The clients of the workers' tasks, by worker (see `workerClients.ts`). */
  readonly workerClients = new WorkerClients();
  /** The scheduler plugins (see `plugins.ts`): {@link addPlugin}, {@link removePlugin}. */
  readonly plugins: SchedulerPlugins;
  /** The task functions clients run here (`runOnScheduler`, `registerSchedulerPlugin`). */
  readonly code: SchedulerCode = new SchedulerCode(this, () => [
    ...this.options.taskModules,
    ...this.taskModules,
  ]);
  /** CPU profiles of the scheduler's thread (`Client.profile` with `scheduler: true`). */
  readonly profiler = new CpuProfiler(() => []);
  /** The profiles clients started on the workers (see `clientProfiles.ts`). */
  readonly clientProfiles = new ClientProfiles();
  /**
   * The Active Memory Manager's rounds: started on listening with
   * `activeMemoryManager`, and at run time by clients (`client.amm`), started,
   * stopped or run once; stopped on closing.
   */
  readonly amm: AmmControl;
  /** The steps of {@link listen}, which a {@link close} meanwhile ends. */
  private readonly starting = new StartSteps("the scheduler was closed while starting", (err) =>
    this.logger.error({ err: asError(err) }, "closing what the start made after close() failed"),
  );
  /** The start under way ({@link listen}), null before and after it. */
  private startWatch: StartWatch | null = null;
  /** Undoes the preload modules (their `weftTeardown`s), once they ran. */
  private preloadTeardown: PreloadTeardown | null = null;
  private statusValue: SchedulerStatus = "init";
  private listener: Listener | null = null;
  /** The HTTP endpoints, with `httpAddress`. */
  private http: HttpEndpoints | null = null;
  private readonly comms = new Set<Comm>();
  private readonly sessions = new Set<Promise<void>>();
  private ttlTimer: ReturnType<typeof setInterval> | null = null;
  /** With `workStealing`: runs a round of work stealing every `workStealingIntervalMs`. */
  private stealingTimer: ReturnType<typeof setInterval> | null = null;
  /** With `idleTimeoutMs`: looks for an idle cluster. */
  private idleTimer: ReturnType<typeof setInterval> | null = null;
  /** When the last look for silent workers ran (wall-clock seconds), 0 before the first. */
  private lastTtlCheck = 0;
  /** With a finite `leaseTimeoutMs`: looks for leases expired unrefreshed. */
  private leaseTimer: ReturnType<typeof setInterval> | null = null;
  /** When the last look for expired leases ran (the lease clock's ms), null before the first. */
  private lastLeaseCheck: number | null = null;
  private closePromise: Promise<void> | null = null;
  private readonly closer = manyListenersAbortController();
  private faultValue: string | null = null;
  private resolveClosed!: () => void;
  /** Resolves once the scheduler has closed (by {@link close} or after a failure). */
  readonly closed: Promise<void> = new Promise((resolve) => {
    this.resolveClosed = resolve;
  });

  constructor(options: SchedulerOptions = {}) {
    this.options = resolveSchedulerOptions(options);
    this.logRecords = new LogRecords(this.options.logLength);
    this.events = new EventBroker(this.options.eventsLogLength, (client, topic, event) =>
      this.router.toClient(client, { op: "event", topic, event }),
    );
    this.logger = this.logRecords.wrap(this.options.logger);
    this.state = new SchedulerState({
      ...this.options.state,
      clock: now,
      validate: this.options.validate,
    });
    this.router = new Router(
      this.state,
      this.counters,
      this.logger,
      (address) => {
        // Retired or restarted: gone from the cluster now, whenever its connection ends.
        this.logger.info({ worker: address }, "worker removed");
        logWorkerEvent(this, "remove-worker", address);
        this.plugins.notify("removeWorker", address);
        // Its messages are no longer read: no profile-ended would come.
        this.clientProfiles.workerLeft(address);
      },
      this.options.closeWorkerGraceMs,
    );
    this.plugins = new SchedulerPlugins(this, this.logger);
    this.amm = new AmmControl(
      this.options.activeMemoryManagerIntervalMs,
      () => this.reduceReplicas(),
      () => this.statusValue === "running",
    );
    this.events.onLog = (topics, msg) => this.plugins.logEvent(topics, msg);
    this.taskStream = new TaskStream(this.options.taskStreamLength);
    this.runner = new StimulusRunner(
      this.state,
      this.logger,
      this.counters,
      (err) => this.onFailure(err),
      (events) => this.taskStream.observeHandled(events),
      (ev, err) => {
        this.tellRefused(ev, err.message);
        return malformedReportStandIn(this.state, ev, err);
      },
    );
  }

  /**
   * A client's message was rejected as malformed: tell the client, whose
   * request of it (a cancel, a dataset published, …) would otherwise wait
   * forever for its answer.
   */
  private tellRefused(ev: SchedulerEvent, why: string): void {
    if (ev.kind !== "client-message") return;
    const { op, clientId, stimulusId } = ev.msg as {
      op?: unknown;
      clientId?: unknown;
      stimulusId?: unknown;
    };
    if (typeof clientId !== "string" || typeof stimulusId !== "string") return;
    if (!this.router.clients.has(clientId)) return; // gone, or the scheduler's own stand-in
    this.router.toClient(clientId, {
      op: "message-refused",
      refused: typeof op === "string" ? op : showValue(op),
      error: why,
      stimulusId,
    });
  }

  /** Create a scheduler and start listening. */
  static async start(options: SchedulerOptions = {}): Promise<Scheduler> {
    const s = new Scheduler(options);
    await s.listen();
    return s;
  }

  /**
   * Add a scheduler plugin (Dask's `Scheduler.add_plugin`; see `SchedulerPlugin`)
   * under `name` (default: its `name`, else its class's), replacing (closing) one
   * of that name, and await its `start(scheduler)`. Resolves with the name.
   */
  addPlugin(plugin: SchedulerPlugin, name?: string): Promise<string> {
    return this.plugins.add(plugin, name);
  }

  /** Remove the plugin `name`, awaiting its `close()`: false if there is none. */
  removePlugin(name: string): Promise<boolean> {
    return this.plugins.remove(name);
  }

  /** Where the HTTP endpoints are (`http://host:port`), null without `httpAddress`. */
  get httpUrl(): string | null {
    return this.http?.url ?? null;
  }

  /**
   * What it answers a connection asking `identity` (Dask's `Server.identity`),
   * and its scheduler file holds.
   */
  get identity(): SchedulerIdentity {
    const http = this.httpUrl;
    return {
      type: "Scheduler",
      id: this.id,
      address: this.address,
      services: http === null ? {} : { http: Number(new URL(http).port) },
    };
  }

  /** The address workers and clients connect to. */
  get address(): string {
    if (this.listener === null) throw new Error("the scheduler is not listening");
    return this.listener.address;
  }

  /**
   * What {@link listen} is doing while the scheduler starts (`running its
   * preload modules' weftSetup (…)`, `running the start of its plugin P`), said
   * by a start that takes long; null before `listen()` and once it settled.
   */
  get startStep(): string | null {
    return this.startWatch?.doing ?? null;
  }

  /** Where the server is in its life: `init`, `running`, `closing`, `closed` or `failed`. */
  get status(): SchedulerStatus {
    return this.statusValue;
  }

  /**
   * Why the scheduler stopped itself (status `failed`), null while it has not
   * or when it was closed by {@link close}: `its state machine failed: …`, a
   * bug after which it cannot be trusted (its clients were told).
   */
  get fault(): string | null {
    return this.faultValue;
  }

  get isRunning(): boolean {
    return this.statusValue === "running";
  }

  /**
   * Aborted as the scheduler closes or fails: what it dials meanwhile (a registering
   * worker's reach check), or a plugin does, ends with the close, not at its timeout.
   */
  get closing(): AbortSignal {
    return this.closer.signal;
  }

  /** Totals since the start and the current numbers of tasks, workers and clients. */
  get countersSnapshot(): SchedulerCounters {
    return this.counters.snapshot(this.state, this.router.clients.size);
  }

  /**
   * Listen at `options.listen` and start checking heartbeats. A {@link close}
   * before it is done makes it reject at once with "the scheduler was closed
   * while starting", as a worker's `start()` does, even while a plugin's
   * `start` or a preload's `weftSetup` never ends: the close stops what it
   * started (such a plugin is closed, the preloads torn down, each waited on
   * up to the close's timeout), and what a step makes after it is closed too.
   * Not closed, it waits on each step as long as it takes.
   */
  async listen(): Promise<this> {
    if (this.statusValue !== "init")
      throw new Error(`cannot start a scheduler that is ${this.statusValue}`);
    const watch = new StartWatch("scheduler", this.logger);
    this.startWatch = watch;
    try {
      // Raced: the steps still wait on a step that stalled; the close below ends them.
      await Promise.race([this.startSteps(watch), watch.stalled]);
    } catch (err) {
      // Over: what the close below waits on is no start to warn of.
      watch.clear();
      // Nothing else will ever run: closed, what started is torn down, as by a close().
      if (watch.hasStalled) {
        this.plugins.inProgressStalled();
        await this.close();
      }
      throw err;
    } finally {
      watch.clear();
      this.startWatch = null;
    }
    this.statusValue = "running";
    const ttl = this.options.workerTtlMs;
    if (Number.isFinite(ttl)) {
      this.ttlTimer = setInterval(() => this.removeSilentWorkers(), ttlCheckIntervalMs(ttl));
      this.ttlTimer.unref();
    }
    const leaseCheckMs = leaseRefreshIntervalMs(this.options.leaseTimeoutMs);
    if (leaseCheckMs !== null) {
      this.leaseTimer = setInterval(() => this.expireLeases(), leaseCheckMs);
      this.leaseTimer.unref();
    }
    if (this.options.workStealing) {
      this.stealingTimer = setInterval(() => this.balance(), this.options.workStealingIntervalMs);
      this.stealingTimer.unref();
    }
    if (this.options.activeMemoryManager) this.amm.start();
    const idle = this.options.idleTimeoutMs;
    if (idle !== null) {
      const watch = new IdleWatch(idle);
      this.idleTimer = setInterval(
        () => {
          if (this.statusValue !== "running" || !watch.check(this.state, Date.now())) return;
          this.logger.info({ idleTimeoutMs: idle }, "the cluster was idle for idleTimeoutMs");
          this.shutdownCluster();
        },
        Math.min(1_000, Math.max(10, idle / 4)),
      );
      this.idleTimer.unref();
    }
    this.logger.info(
      { address: this.address, ...(this.http !== null ? { http: this.http.url } : {}) },
      "scheduler listening",
    );
    return this;
  }

  /** The steps of {@link listen}, each told to `watch` as it begins. */
  private async startSteps(watch: StartWatch): Promise<void> {
    watch.doing = `listening at ${this.options.listen}`;
    // Task arguments are passed on to workers unread: not joined into one buffer.
    this.listener = await this.starting.step(
      () =>
        listen(this.options.listen, (comm) => this.accept(comm), {
          ...commOptionsOf(this.options),
          forwardOutOfBandBuffers: true,
          onRefusedPeer: (peer, reason) =>
            this.logger.warn({ peer, reason }, "refused a TLS connection"),
        }),
      (late) => late.close(),
    );
    try {
      const httpAddress = this.options.httpAddress;
      if (httpAddress !== null) {
        watch.doing = `starting its HTTP endpoints at ${httpAddress}`;
        this.http = await this.starting.step(
          async () => {
            // Loaded only to serve: its metrics (prom-client), pages and routes are some 0.1 s
            // of CPU at every start, and most processes serve no HTTP.
            const { startSchedulerHttp } = await import("./httpEndpoints.ts");
            return startSchedulerHttp(this, httpAddress, this.options.metricsNamespace);
          },
          (late) => late.close(),
        );
      }
      // A plugin's start or a weftSetup may never end: close() must end the start all the
      // same. The plugin still starting is closed by the close, the preloads torn down.
      for (const plugin of this.options.plugins) {
        watch.doing = `running the start of its plugin ${plugin.name ?? plugin.constructor?.name}`;
        await this.starting.step(() => this.plugins.add(plugin));
      }
      watch.doing = `running its preload modules' weftSetup (${this.options.preload.join(", ")})`;
      await this.starting.step(() => {
        const preloads = startServerPreloads(this.options.preload, this, this.logger, watch);
        this.preloadTeardown = preloads.teardown;
        return preloads.setUp;
      });
    } catch (err) {
      // close() meanwhile stops what was started, within its timeout.
      if (this.starting.isStopped) throw err;
      // Failed: what is closed below is no start to warn of.
      watch.clear();
      await this.plugins.closeAll();
      await this.http?.close();
      this.http = null;
      await this.listener?.close();
      this.listener = null;
      await this.runPreloadTeardown();
      throw err;
    }
  }

  /** Hand stimuli to the state machine and route the messages it returns. */
  dispatch(events: SchedulerEvent[]): void {
    if (events.length === 0 || this.statusValue !== "running") return;
    this.router.route(this.runner.run(events));
  }

  private accept(comm: Comm): void {
    if (this.statusValue !== "running") {
      comm.abort();
      return;
    }
    this.comms.add(comm);
    const session = this.serve(comm).finally(() => {
      this.comms.delete(comm);
      this.sessions.delete(session);
    });
    this.sessions.add(session);
  }

  private async serve(comm: Comm): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = this.options.handshakeTimeoutMs;
    const timeout = new Promise<typeof HANDSHAKE_TIMEOUT>((resolve) => {
      // Infinity: no limit (a Node.js timer that long would fire after 1 ms).
      if (limit !== Number.POSITIVE_INFINITY) {
        timer = setTimeout(() => resolve(HANDSHAKE_TIMEOUT), limit);
      }
    });
    let first: unknown;
    try {
      first = await Promise.race([comm.recv(), timeout]);
    } catch (err) {
      // Closed before saying anything: quietly if it just hung up, with the reason if what
      // it sent could not be read (not weft's protocol, a broken frame, over the limits).
      if (isNetworkError(err)) return;
      this.logger.info(
        { peer: comm.peerAddress, reason: (err as Error).message },
        "a connection closed before introducing itself",
      );
      return;
    } finally {
      clearTimeout(timer);
    }
    if (first === HANDSHAKE_TIMEOUT) {
      this.logger.warn({ peer: comm.peerAddress }, "a connection did not introduce itself in time");
      comm.abort();
      return;
    }
    const op = typeof first === "object" && first !== null ? (first as { op?: unknown }).op : null;
    if (this.statusValue !== "running") {
      comm.abort();
    } else if (op === "register-worker") {
      await serveWorker(this, comm, first as object);
    } else if (op === "register-client") {
      await serveClient(this, comm, first as Record<string, unknown>);
    } else if (op === "identity") {
      // A question, not a session (`weft scheduler --scheduler-file` asks who listens here).
      await answerIdentity(comm, first as { id?: unknown }, this.identity);
    } else {
      this.counters.rejectedMessages++;
      this.logger.error(
        { peer: comm.peerAddress, op },
        "rejected a connection: its first message must be register-worker, register-client or identity",
      );
      comm.abort();
    }
  }

  /**
   * Release the locks, multi-locks and semaphore leases not refreshed within
   * `leaseTimeoutMs` (Dask's `_check_lease_timeout`), granting them to the next
   * waiters. A task's client whose worker was heard from within it keeps its
   * leases: its pool thread may be running a synchronous task, which holds up
   * its refreshes as a task holding the GIL holds up a Dask worker's (in Dask,
   * a task computing in Python leaves its worker's event loop free to refresh).
   */
  expireLeases(): void {
    if (this.statusValue !== "running") return;
    const timeoutMs = this.options.leaseTimeoutMs;
    const t = MONOTONIC_CLOCK.now();
    const sinceLastCheck = this.lastLeaseCheck === null ? 0 : t - this.lastLeaseCheck;
    this.lastLeaseCheck = t;
    // The refreshes sent while this process was blocked are unread yet: look next time.
    if (sinceLastCheck > leaseBlockedGapMs(timeoutMs)) return;
    const wallNow = now();
    const alive = (client: string): boolean => {
      const worker = this.workerClients.workerOf(client);
      const ws = worker === undefined ? undefined : this.state.workers.get(worker);
      return ws !== undefined && (wallNow - ws.lastSeen) * 1000 <= timeoutMs;
    };
    for (const e of this.coordination.expireLeases(timeoutMs, alive)) {
      this.logger.warn(
        { ...e, idleMs: Math.round(e.idleMs) },
        "a lease expired unrefreshed within leaseTimeoutMs: released to the next waiter",
      );
    }
  }

  /** Remove the workers not heard from for `workerTtlMs`. */
  removeSilentWorkers(): void {
    if (this.statusValue !== "running") return;
    const t = now();
    const ttlSeconds = this.options.workerTtlMs / 1000;
    const sinceLastCheck = this.lastTtlCheck === 0 ? 0 : t - this.lastTtlCheck;
    this.lastTtlCheck = t;
    if (sinceLastCheck > blockedGapMs(this.options.workerTtlMs) / 1000) {
      // This process did not run for a good part of the TTL (a synchronous task of an
      // inline worker of the same process, a machine suspended): the heartbeats sent
      // meanwhile have not been read yet, so silence is no evidence. Look next time.
      this.logger.warn(
        { blockedSeconds: Number(sinceLastCheck.toFixed(3)) },
        "the scheduler's event loop was blocked; heartbeats checked at the next look",
      );
      return;
    }
    for (const address of silentWorkers(this.state, t, ttlSeconds)) {
      logWorkerLoss(
        this.logger,
        "warn",
        address,
        "worker missed its heartbeats; removing it",
        workerLoss(this.state, address, (c) => this.workerClients.workerOf(c)),
      );
      logWorkerEvent(this, "remove-worker", address);
      this.plugins.notify("removeWorker", address);
      const stream = this.router.workers.get(address);
      this.router.workers.delete(address);
      stream?.comm.abort();
      this.clientProfiles.workerLeft(address);
      // Frozen or cut off, it may hold its tasks' clients open, and their locks with them.
      this.workerClients.letGo(address);
      this.dispatch([
        {
          kind: "remove-worker",
          worker: address,
          expected: false,
          stimulusId: newStimulusId("check-worker-ttl"),
        },
      ]);
    }
  }

  /**
   * A round of work stealing (the `balance` stimulus), when it may do
   * something ({@link mayBalance}): a round with nothing to do leaves no
   * record in the stimulus log.
   */
  private balance(): void {
    if (!mayBalance(this.state)) return;
    this.dispatch([{ kind: "balance", stimulusId: newStimulusId("balance") }]);
  }

  /**
   * A round of the Active Memory Manager (the `reduce-replicas` stimulus),
   * when some key is held by more than one worker: the number of replicas it
   * asked workers to drop (0 when it ran none, the server not running).
   */
  private reduceReplicas(): number {
    if (this.state.replicatedTasks.size === 0) return 0;
    // The stimulus is handled at once: the count it adds to is the round's.
    const before = this.state.replicasDropped;
    this.dispatch([{ kind: "reduce-replicas", stimulusId: newStimulusId("reduce-replicas") }]);
    return this.state.replicasDropped - before;
  }

  private onFailure(err: Error): void {
    if (this.statusValue !== "running") return;
    this.statusValue = "failed";
    this.faultValue = `its state machine failed: ${err.message}`;
    const msg: SchedulerFailedMsg = {
      op: "scheduler-failed",
      message: `the scheduler failed and stopped: ${err.message}`,
    };
    for (const id of this.router.clients.keys()) this.router.toClient(id, msg);
    this.closePromise ??= this.shutdown("failed");
  }

  /**
   * Close the cluster (`Client.shutdown`, Dask's): every worker is told to
   * close (`close-worker`, as when retired: it exits 0, and its nanny does not
   * start it again), then, at the next turn of the event loop (an answer sent
   * now still leaves), the scheduler closes. The addresses of the workers told.
   */
  shutdownCluster(): string[] {
    const workers = [...this.router.workers.keys()].sort();
    if (this.statusValue !== "running") return workers;
    this.logger.info({ workers: workers.length }, "shutting the cluster down");
    const stimulusId = newStimulusId("shutdown");
    this.router.route(
      workers.map((address) => ({
        to: { kind: "worker", address },
        msg: { op: "close-worker", reason: "scheduler-shutdown", stimulusId },
      })),
    );
    setImmediate(() => void this.close());
    return workers;
  }

  /**
   * Stop: accept no more connections, flush and close every stream (for up to
   * {@link STREAMS_FLUSH_S} seconds, or `timeout` if less: then every connection
   * is cut). Workers see the connection close and shut down; clients' pending
   * futures fail.
   * The plugins' `close`s, then the preload modules' `weftTeardown`s, are
   * waited on up to `timeout` seconds each group (`Infinity`: until they end);
   * one still running then is logged at warn and no longer waited on.
   * Idempotent. Rejects with a RangeError, closing nothing, for a `timeout` that is
   * not a number ≥ 0.
   */
  close(timeout = DEFAULT_CLOSE_TIMEOUT_S): Promise<void> {
    const refused = closeTimeoutError("Scheduler.close", timeout);
    if (refused !== null) return Promise.reject(refused);
    if (this.statusValue === "init") {
      this.statusValue = "closed";
      this.starting.stop();
    }
    this.closePromise ??= this.shutdown("closed", timeout);
    return this.closePromise;
  }

  /** The preloads' `weftTeardown`s, once: a close during `listen` may reach it from both. */
  private async runPreloadTeardown(timeout = DEFAULT_CLOSE_TIMEOUT_S): Promise<void> {
    const teardown = this.preloadTeardown;
    this.preloadTeardown = null;
    // One that never ends must not keep the scheduler from closing.
    const budget = new CloseBudget(timeout);
    await teardown?.(budget);
    budget.clear();
  }

  private async shutdown(
    final: "closed" | "failed",
    timeout = DEFAULT_CLOSE_TIMEOUT_S,
  ): Promise<void> {
    if (this.statusValue === "running") this.statusValue = "closing";
    this.closer.abort(new Error("the scheduler is closing"));
    // As Dask's close, before anything is stopped.
    this.plugins.beforeClose();
    if (this.ttlTimer !== null) clearInterval(this.ttlTimer);
    this.ttlTimer = null;
    if (this.leaseTimer !== null) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
    if (this.stealingTimer !== null) clearInterval(this.stealingTimer);
    this.stealingTimer = null;
    this.amm.stop();
    if (this.idleTimer !== null) clearInterval(this.idleTimer);
    this.idleTimer = null;
    await this.listener?.close();
    await this.http?.close();
    if (this.starting.isStopped) {
      // Closed while starting: it never served there, and `address` says so.
      this.listener = null;
      this.http = null;
    }
    this.coordination.dropAll();
    // Each session the plugins saw begin, they see end, and before their close. Dask
    // calls remove_worker/remove_client for these too, but from the sessions' ends, after
    // the plugins' close; the sessions cut here find themselves removed and tell nobody.
    for (const address of this.router.workers.keys()) this.plugins.notify("removeWorker", address);
    for (const id of this.router.clients.keys()) this.plugins.notify("removeClient", id);
    const streams = [...this.router.workers.values(), ...this.router.clients.values()];
    this.router.workers.clear();
    this.router.clients.clear();
    // Within the caller's timeout too: a close(1) waited 5 s on a peer not reading.
    const flushS = Math.min(STREAMS_FLUSH_S, timeout);
    const flush = new CloseBudget(flushS);
    const flushed = await flush.settles(Promise.allSettled(streams.map((s) => s.close())));
    flush.clear();
    if (!flushed && flushS < STREAMS_FLUSH_S) {
      // What the caller asked: a healthy peer's end does not close in no time (close(0)).
      this.logger.info(
        { waitedS: flushS },
        "closing: cut off the connections whose peers had not taken what their streams held, or closed their ends, within the close's timeout",
      );
    } else if (!flushed) {
      this.logger.warn(
        { waitedS: flushS },
        "closing: a peer did not take what its stream held, or did not close its end, in time: cut off",
      );
    }
    for (const comm of this.comms) comm.abort();
    await Promise.allSettled([...this.sessions]);
    await this.plugins.closeAll(new CloseBudget(timeout));
    this.profiler.close();
    await this.runPreloadTeardown(timeout);
    if (this.statusValue !== "failed") this.statusValue = final;
    this.logger.info({ status: this.statusValue }, "scheduler closed");
    this.resolveClosed();
  }
}
