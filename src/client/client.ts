/**
 * The client: submits tasks and graphs to a scheduler, and hands back
 * futures whose results it fetches from the workers holding them.
 *
 * ```ts
 * const client = await Client.connect("tcp://10.0.0.1:8786"); // or cluster.client()
 * const x = client.submit(inc, 1);           // a Future<number>
 * const y = client.submit(add, x, 10);       // futures as arguments: y = add(inc(1), 10)
 * console.log(await y);                      // 12
 * const ys = client.map(inc, [1, 2, 3]);
 * console.log(await client.gather(ys));      // [2, 3, 4]
 * console.log(await client.get({ a: ["inc", 1], b: ["add", "a", 5] })); // { b: 7 }
 * const [big] = await client.scatter([bigArray]); // on a worker once, an input to many tasks
 * await client.close();
 * ```
 */

import { inspect } from "node:util";
import { isMainThread } from "node:worker_threads";
import type { Logger } from "pino";
import { type CommOptions, commOptionsOf } from "../comm/comm.ts";
import { checkDialAddress } from "../comm/connect.ts";
import { schedulerPendingLine, schedulerWaitLine } from "../comm/connectWaiting.ts";
import { withReplyLimit } from "../comm/replyLimit.ts";
import type { ActorOp, ActorRef } from "../protocol/actors.ts";
import { joinedSchedulerDump } from "../protocol/clusterDump/schedulerParts.ts";
import { clusterDump, dumpFileName, writeClusterDump } from "../protocol/clusterDump/write.ts";
import type { GraphTask } from "../protocol/messagesClient.ts";
import type {
  SchedulerCounters,
  TaskStreamRecord,
  WorkerIdentity,
  WorkerPluginSpec,
} from "../protocol/messagesSession.ts";
import { containLogger } from "../util/containedLogger.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { checkKnownOptions } from "../util/knownOptions.ts";
import { envLogLevel, weftLogger } from "../util/logger.ts";
import { type LogRecord, logCountProblem } from "../util/logRecords.ts";
import { dumpNameFailure } from "../util/outputFile.ts";
import { showValue } from "../util/showValue.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { PeerPool } from "../worker/peerPool.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { Actor, type ActorHost } from "./actor.ts";
import { ActiveMemoryManagerClient } from "./amm.ts";
import {
  checkOptionalBoolean,
  itemsOf,
  knownOptionsOf,
  nullsAsDefaults,
  optionsOf,
  workerAddressesField,
} from "./argChecks.ts";
import {
  askedFields,
  cuttingLeavers,
  onEveryWorker,
  sortedByKey,
  unaskedIn,
  unmatchedSelectors,
  workersNamed,
} from "./askWorkers.ts";
import { Cancels } from "./cancels.ts";
import { ClientDatasets } from "./clientDatasets.ts";
import { type ClientOptions, connectTimeoutMs, newClientId } from "./clientOptions.ts";
import { closeAtExit } from "./closeAtExit.ts";
import { ClusterAdmin } from "./clusterAdmin.ts";
import { type DumpClusterStateOptions, dumpOptionsProblem, workerDumps } from "./clusterDump.ts";
import {
  type CoordinationRequest,
  Event,
  HELD_DATASET_PREFIX,
  Lock,
  MultiLock,
  Queue,
  Semaphore,
  Variable,
} from "./coordination.ts";
import {
  refuseGatherErrors,
  refuseSecondIterable,
  refuseWorkersGivenPositionally,
} from "./daskPositional.ts";
import { checkDatasetName } from "./datasets.ts";
import { holdAliveUntilAnswered } from "./dueAnswer.ts";
import {
  ClientClosedError,
  DatasetError,
  MetadataKeyError,
  RestartTimeoutError,
  RunError,
  SchedulerReplyError,
  WorkersTimeoutError,
} from "./errors.ts";
import {
  type ClusterEvent,
  decodeEvent,
  type EventHandler,
  encodeEventMessage,
  Subscriptions,
  topicsOf,
} from "./events.ts";
import { Future, type FutureHost } from "./future.ts";
import { isContainer } from "./futureSearch.ts";
import type { FutureArgs, FutureOr, Gathered, NotSearched, TaskResult } from "./futureTypes.ts";
import { Gatherer, type GatherHost } from "./gatherer.ts";
import { type BuiltGraph, buildGraph, type Graph } from "./graph.ts";
import { HeldLeases } from "./heldLeases.ts";
import type { KeyRecord } from "./keyRecord.ts";
import { KeyRecords } from "./keyRecords.ts";
import { leftTheCluster } from "./leftCluster.ts";
import { type LogsOptions, logsOfWorkers, type WorkerLogsOptions } from "./logs.ts";
import { checkMapKeys, type MapOptions, splitMapKey } from "./mapKeys.ts";
import { decodeMetadata, encodeMetadata, metadataKeys } from "./metadata.ts";
import { NANNY_PLUGIN_RPCS, type NannyPluginOptions, nannyPluginSpec } from "./nannyPlugins.ts";
import {
  CANCEL_OPTIONS,
  DEFAULT_OPTIONS,
  DUMP_OPTIONS,
  LOGS_OPTIONS,
  NBYTES_OPTIONS,
  PUBLISH_OPTIONS,
  QUEUE_OPTIONS,
  RUN_OPTIONS,
  SCATTER_OPTIONS,
  SEMAPHORE_OPTIONS,
  SUB_OPTIONS,
  TASK_STREAM_OPTIONS,
  WORKER_LOGS_OPTIONS,
} from "./optionNames.ts";
import { PendingRegistrations } from "./pendingRegistrations.ts";
import { type PerformanceReportOptions, performanceReport } from "./performanceReport.ts";
import { type ClusterProfile, type ProfileOptions, profileWhile } from "./profile.ts";
import { Pub, PubSubSubscriptions, type Sub, type SubOptions } from "./pubsub.ts";
import { Requests } from "./requests.ts";
import { Results } from "./results.ts";
import { type RunOptions, runOnWorkers } from "./runOnWorkers.ts";
import { arrayValues, namedValues, type ScatterOptions, scatterOptionsProblem } from "./scatter.ts";
import { Scatters } from "./scatterRegistration.ts";
import { runArgs, runOutcome } from "./schedulerCode.ts";
import { SchedulerConnection } from "./schedulerConnection.ts";
import { SchedulerMessages } from "./schedulerMessages.ts";
import { SendOrder } from "./sendOrder.ts";
import { mergedStory, type StoryRecord, storiesOfWorkers, storyKeysProblem } from "./story.ts";
import { Submissions } from "./submissions.ts";
import {
  type ComputeOptions,
  checkComputeOptions,
  checkSubmitOptions,
  graphTask,
  isPure,
  isScalar,
  type SubmitOptions,
  wantedKeys,
} from "./submitOptions.ts";
import { argsWithRefs, taskName } from "./taskArgs.ts";
import { loadOnWorkers, taskModuleUrl } from "./taskModules.ts";
import { TASK_OUTPUT_TOPICS } from "./taskPrint.ts";
import { tokenize } from "./tokenize.ts";
import { readUpload, type UploadFileOptions, uploadToWorkers } from "./uploads.ts";
import {
  addOnEach,
  removeOnEach,
  unregisterPlugin,
  WORKER_PLUGIN_RPCS,
  type WorkerPluginOptions,
  workerPluginSpec,
} from "./workerPlugins.ts";
import { writing } from "./writablePath.ts";

/** A connection to a scheduler, and the futures of what it submitted. */
export class Client implements FutureHost, GatherHost, ActorHost {
  /** The client's id, unique on its scheduler. */
  readonly id: string;
  /** The scheduler's address. */
  readonly address: string;
  /** Rpc connections to the workers results are fetched from. */
  readonly peers: PeerPool;
  /** Where the client logs (the `logger` option, or a pino logger named `weft.client`). */
  readonly logger: Logger;
  /**
   * The scheduler's Active Memory Manager, operated at run time (Dask's
   * `client.amm`): `start()`, `stop()`, `running()`, `status()`, and
   * `runOnce()`, which runs one round now and resolves with the number of
   * replicas it asked workers to drop. See {@link ActiveMemoryManagerClient}.
   */
  readonly amm = new ActiveMemoryManagerClient(async (method) => {
    this.checkOpen();
    return this.conn.request("amm", { method });
  });
  /** The handlers of the topics subscribed to (`subscribeTopic`). */
  private readonly subscriptions: Subscriptions;
  /** The client's publish–subscribe link, and its `Sub`s by name (`pub`, `sub`). */
  private readonly pubsub = new PubSubSubscriptions({
    send: (name, msg) => {
      this.checkOpen();
      this.conn.send({ op: "pubsub-put", name, msg });
    },
    request: async (op, name) => {
      this.checkOpen();
      return this.conn.request(op, { name });
    },
    holdLoop: () => this.conn.holdLoop(),
  });
  // The concepts behind the methods are modules of their own, each given what it
  // needs of the client (its host) in the constructor, in this order.
  /** The records of the keys this client holds futures of, and their releases. */
  private readonly records: KeyRecords;
  /** This client's requests answered under their stimulus id, and the waits for their answers. */
  private readonly requests: Requests;
  /** This client's submissions, and what becomes of their keys when one cannot be sent. */
  private readonly submissions: Submissions;
  /** Waits for and fetches the results of this client's futures. */
  private readonly results: Results;
  /** Publishes, gets and unpublishes datasets. */
  private readonly datasets: ClientDatasets;
  /** This client's cancels not answered yet. */
  private readonly cancels: Cancels;
  /** The operations on the cluster's workers (replicate, rebalance, retire, restart). */
  private readonly admin: ClusterAdmin;
  /** This client's scatters, and those in progress. */
  private readonly scatters: Scatters;
  /** The plugin registrations on their way, which an unregistration of their name waits for. */
  private readonly registrations = new PendingRegistrations();
  private closedError: Error | null = null;
  /**
   * {@link closed}: one promise however often it is read (a new one each time would
   * keep a resolver per read, `Promise.race([work, client.closed])` in a loop, until
   * the client closes), and its resolver.
   */
  private closedPromise: Promise<Error> | null = null;
  private resolveClosed: ((why: Error) => void) | null = null;
  /** The close in progress or done: close() is idempotent. */
  private closing: Promise<void> | null = null;
  /** What lets the process end again, for each topic subscribed with `subscribeTopic`. */
  private readonly topicHolds = new Map<string, () => void>();
  /** Forgets this client among those closed when the program ends (see `closeAtExit`). */
  private forgetAtExit: () => void = () => {};
  /** True once the scheduler answered this client's `shutdown`: its closing is then no loss. */
  private shutdownAnswered = false;
  private keyCounter = 0;
  /** The leases its locks and semaphores hold, refreshed with the scheduler (see `heldLeases.ts`). */
  private readonly leases: HeldLeases;
  /** Its variables' and queues' calls, sent in the order made, by name (see `sendOrder.ts`). */
  private readonly sendOrder = new SendOrder();

  private constructor(
    private readonly conn: SchedulerConnection,
    id: string,
    address: string,
    private readonly timeoutMs: number,
    limits: CommOptions,
    logger: Logger,
  ) {
    this.id = id;
    this.address = address;
    this.logger = logger;
    this.leases = new HeldLeases(
      (fields) => this.conn.request("lease-refresh", fields),
      conn.leaseTimeoutMs,
    );
    this.subscriptions = new Subscriptions(logger);
    this.peers = new PeerPool({
      connectTimeoutMs: timeoutMs,
      ...limits,
      keepAliveOnlyWhileAsked: true,
    });
    this.records = new KeyRecords({
      id,
      closedError: () => this.closedError,
      send: (msg) => this.conn.send(msg),
      holdLoop: () => this.conn.holdLoop(),
    });
    this.requests = new Requests({
      id,
      send: (msg) => {
        this.flushReleases();
        this.conn.send(msg);
      },
      holdLoop: () => this.conn.holdLoop(),
    });
    this.submissions = new Submissions({
      id,
      futureHost: this,
      record: (key) => this.records.get(key),
      flushReleases: () => this.flushReleases(),
      send: (msg) => this.conn.send(msg),
      // Any request would do: this one is cheap, and changes nothing.
      askHandled: () => {
        this.conn.request("who-has", { keys: [] }).catch(() => {});
      },
    });
    this.results = new Results(
      { record: (key) => this.records.get(key), closedError: () => this.closedError },
      new Gatherer(this),
    );
    this.datasets = new ClientDatasets({
      id,
      futureHost: this,
      requests: this.requests,
      record: (key) => this.records.get(key),
      releasesSent: () => this.records.releasesSent,
      nextSubmission: () => this.submissions.next(),
      send: (msg) => this.conn.send(msg),
      checkOpen: () => this.checkOpen(),
    });
    this.cancels = new Cancels({
      id,
      requests: this.requests,
      submissions: this.submissions,
      record: (key) => this.records.get(key),
      send: (msg) => this.conn.send(msg),
      holdLoop: () => this.conn.holdLoop(),
    });
    this.admin = new ClusterAdmin({
      id,
      requests: this.requests,
      results: this.results,
      workers: () => this.workers(),
      checkOpen: () => this.checkOpen(),
      ownFutures: (op, futures) => this.ownFutures(op, futures),
    });
    this.scatters = new Scatters({
      id,
      peers: this.peers,
      workers: () => this.workers(),
      inProcess: address.startsWith("inproc://"),
      timeoutMs,
      futureHost: this,
      requests: this.requests,
      submissions: this.submissions,
      record: (key) => this.records.get(key),
      checkOpen: () => this.checkOpen(),
      closedError: () => this.closedError,
      send: (msg) => this.conn.send(msg),
    });
    const messages = new SchedulerMessages({
      record: (key) => this.records.get(key),
      peers: this.peers,
      cancels: this.cancels,
      requests: this.requests,
      submissions: this.submissions,
      datasets: this.datasets,
      subscriptions: this.subscriptions,
      pubsub: this.pubsub,
      schedulerFailed: (message) => this.shutDown(new ClientClosedError(message)),
      logger,
    });
    conn.onMessage = (msg) => messages.onMessage(msg);
    conn.onClose = (err) => {
      if (err === null) return undefined;
      this.shutDown(
        this.shutdownAnswered
          ? closedError(undefined)
          : new ClientClosedError(`lost the scheduler: ${err.message}`),
      );
      return this.closedError ?? undefined;
    };
    conn.onSendFailed = (msg, err) => this.sendFailed(msg, err);
    conn.onAnswered = (sent) => this.submissions.handledBefore(sent);
  }

  /**
   * A message could not be sent to the scheduler: the request waiting for its
   * answer, or the futures of a graph that could not be submitted, fail with
   * the reason (they would wait forever); anything else is logged.
   */
  private sendFailed(msg: unknown, err: Error): void {
    if (this.requests.unsent(msg, err)) return;
    if (this.submissions.unsent(msg, err)) return;
    const op = (msg as { op?: unknown } | null)?.op;
    this.logger.error({ err, op }, "a message to the scheduler could not be sent");
  }

  /**
   * Connect to the scheduler at `address` (`tcp://host:port`, `tls://host:port` with
   * `tls`, or `inproc://…`), or at the address a function gives before each try
   * while the scheduler cannot be reached (a scheduler file read again: one started
   * again elsewhere has rewritten it); the function's rejection ends the wait with it.
   */
  static async connect(
    address: string | (() => Promise<string>),
    options: ClientOptions = {},
  ): Promise<Client> {
    if (typeof address === "function") {
      const given = address;
      // Each address checked as a given one is: a bad one is the caller's mistake.
      return await Client.open(async () => Client.checkedAddress(await given()), options);
    }
    return await Client.open(Client.checkedAddress(address), options);
  }

  /**
   * The client of the tasks of the worker at `worker` (their `getClient()`):
   * `connect`, telling the scheduler which worker it serves, so that the
   * scheduler lets it go, with its locks and leases, if it removes that worker
   * unasked (`src/scheduler/workerClients.ts`).
   * @internal
   */
  static async connectForWorker(
    address: string,
    options: ClientOptions,
    worker: string,
  ): Promise<Client> {
    return await Client.open(Client.checkedAddress(address), options, worker);
  }

  /** `address` if a client can dial it; throws a TypeError saying why not. */
  private static checkedAddress(address: unknown): string {
    if (typeof address !== "string" || address === "") {
      throw new TypeError(
        `Client.connect: the address must be a non-empty string (tcp://host:port, …), got ${showValue(address)}`,
      );
    }
    try {
      checkDialAddress(address);
    } catch (err) {
      throw new TypeError(`Client.connect: ${(err as Error).message}`);
    }
    return address;
  }

  private static async open(
    where: string | (() => Promise<string>),
    options: ClientOptions,
    worker?: string,
  ): Promise<Client> {
    const timeoutMs = connectTimeoutMs(options);
    const id = newClientId(options.name);
    const limits = commOptionsOf(options);
    const logger = containLogger(options.logger ?? weftLogger("weft.client", envLogLevel("info")));
    const conn = await SchedulerConnection.open(where, id, {
      timeoutMs,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(worker !== undefined ? { worker } : {}),
      ...(options.batchedSendIntervalMs !== undefined
        ? { batchedSendIntervalMs: options.batchedSendIntervalMs }
        : {}),
      ...limits,
      onFirstFailure: (failure) => {
        const { address, reason } = failure;
        logger.info({ scheduler: address, reason, waitMs: timeoutMs }, schedulerWaitLine(failure));
        // Its promise's rejection too: dropped, it was an unhandled rejection.
        callGuarded(
          () => options.onWaiting?.({ address, reason, waitMs: timeoutMs }),
          (err) => logger.warn({ err }, "Client option onWaiting threw"),
        );
      },
      // As a worker's registration says it: the first failure comes only at the try's timeout.
      onTryPending: ({ address, pendingMs }) =>
        logger.info(
          { scheduler: address, pendingMs, waitMs: timeoutMs },
          schedulerPendingLine(address, pendingMs),
        ),
    });
    const address = conn.address;
    const client = new Client(conn, id, address, timeoutMs, limits, logger);
    // In one process (a LocalCluster's client) nothing holds the process, and the
    // cluster's close closes it; a task's client (`worker` given) is its worker's.
    if (!address.startsWith("inproc://") && worker === undefined && isMainThread) {
      client.forgetAtExit = closeAtExit(client);
    }
    if (options.printTaskOutput ?? true) {
      // Not waited for: the subscriptions go first on the stream, before
      // anything this client submits, whose tasks' lines come after them.
      for (const [topic, handler] of TASK_OUTPUT_TOPICS) {
        client.subscriptions.set(topic, handler);
        conn.request("subscribe-topic", { topic }).catch((err: unknown) => {
          if (!client.isClosed) logger.warn({ err, topic }, "could not subscribe to tasks' output");
        });
      }
    }
    return client;
  }

  /** A key no other submission has: `name-<client id>-<counter>` (for impure tasks). */
  private freshKey(name: string): string {
    return `${name}-${this.id}-${(this.keyCounter++).toString(36)}`;
  }

  toString(): string {
    return `<Client ${this.id} of ${this.address}${this.isClosed ? ", closed" : ""}>`;
  }

  /** What `console.log(client)` shows, as Dask's repr: not its internals. */
  [inspect.custom](): string {
    return this.toString();
  }

  /** True once closed, or once the scheduler went away. */
  get isClosed(): boolean {
    return this.closedError !== null;
  }

  /** Resolves (with why) once the client is closed or has lost its scheduler; never rejects. */
  get closed(): Promise<Error> {
    this.closedPromise ??=
      this.closedError !== null
        ? Promise.resolve(this.closedError)
        : new Promise((resolve) => {
            this.resolveClosed = resolve;
          });
    return this.closedPromise;
  }

  /** Keys this client holds futures for. */
  get keyCount(): number {
    return this.records.size;
  }

  // ---------------------------------------------------------------------------
  // Submitting
  // ---------------------------------------------------------------------------

  /**
   * Run `fn(...args)` on a worker. `fn` is a task definition (`defineTask`) or
   * a registered name; arguments may be futures (their results are passed).
   */
  submit<F extends TaskFunction>(
    fn: TaskDefinition<F>,
    ...args: FutureArgs<Parameters<F>>
  ): Future<TaskResult<F>>;
  submit(fn: string, ...args: unknown[]): Future<unknown>;
  submit(fn: TaskDefinition<TaskFunction> | string, ...args: unknown[]): Future<unknown> {
    return this.submitAs("submit", {}, fn, args);
  }

  /**
   * {@link submit} with options: `retries`, `key`, `pure`, `resources`,
   * `priority`, `workers`, `allowOtherWorkers`, `actor`. With `actor: true`
   * the future's result is an {@link Actor} handle to the object `fn` returns.
   */
  submitWith<F extends TaskFunction>(
    options: SubmitOptions & { readonly actor: true },
    fn: TaskDefinition<F>,
    ...args: FutureArgs<Parameters<F>>
  ): Future<Actor<TaskResult<F>>>;
  submitWith<F extends TaskFunction>(
    options: SubmitOptions,
    fn: TaskDefinition<F>,
    ...args: FutureArgs<Parameters<F>>
  ): Future<TaskResult<F>>;
  submitWith(options: SubmitOptions, fn: string, ...args: unknown[]): Future<unknown>;
  submitWith(
    options: SubmitOptions,
    fn: TaskDefinition<TaskFunction> | string,
    ...args: unknown[]
  ): Future<unknown> {
    return this.submitAs("submitWith", options, fn, args);
  }

  /** {@link submitWith}, its errors naming `op`: the call the user made. */
  private submitAs(
    op: "submit" | "submitWith",
    options: SubmitOptions,
    fn: TaskDefinition<TaskFunction> | string,
    args: unknown[],
  ): Future<unknown> {
    this.checkOpen();
    const name = taskName(fn, op);
    const what = `${op}(${name})`;
    const given = checkSubmitOptions(op, options);
    const deps = new Set<string>();
    const prepared = argsWithRefs(args, deps, this, what);
    const key = given.key ?? (isPure(given) ? tokenize(name, prepared, op) : this.freshKey(name));
    const task = graphTask(name, prepared, deps, given);
    return this.submissions.submit(new Map([[key, task]]), [key])[0];
  }

  /**
   * `fn(item)` for every item, as one batch; one future per item, in order.
   * `fn` is called with one argument: a function needing more does not
   * type-check (Dask's `map(f, xs, ys)` is `map(f, zipped)` here).
   */
  map<F extends (item: never) => unknown>(
    fn: TaskDefinition<F>,
    items: Iterable<FutureOr<Parameters<F>[0]>>,
    options?: MapOptions & Omit<SubmitOptions, "key" | "actor">,
  ): Future<TaskResult<F>>[];
  map(
    fn: string,
    items: Iterable<unknown>,
    options?: MapOptions & Omit<SubmitOptions, "key">,
  ): Future<unknown>[];
  map(
    fn: TaskDefinition<TaskFunction> | string,
    items: Iterable<unknown>,
    options: MapOptions & Omit<SubmitOptions, "key"> = {},
  ): Future<unknown>[] {
    this.checkOpen();
    const name = taskName(fn, "map");
    refuseSecondIterable(options);
    const split = splitMapKey(options);
    const given = checkSubmitOptions("map", split.rest as SubmitOptions);
    const list = itemsOf("map", "items", items);
    const keyed = checkMapKeys(split.key, list.length);
    const tasks = new Map<string, GraphTask>();
    const keys: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      let deps: Set<string> | null = null;
      let prepared: unknown[];
      if (isScalar(item)) {
        prepared = [item];
      } else {
        deps = new Set<string>();
        // Which item, or the error would say args[0] of them all.
        prepared = argsWithRefs([item], deps, this, () => `map(${name}), item ${i}`);
      }
      const key =
        keyed.kind === "explicit"
          ? keyed.keys[i]
          : keyed.kind === "derived"
            ? isPure(given)
              ? tokenize(name, prepared, "map")
              : this.freshKey(name)
            : isPure(given)
              ? // Dask's `<prefix>-<tokenize(func, *args)>`.
                `${keyed.prefix}${tokenize(name, prepared, "map").slice(name.length)}`
              : this.freshKey(keyed.prefix);
      tasks.set(key, graphTask(name, prepared, deps, given));
      keys.push(key);
    }
    return this.submissions.submit(tasks, keys);
  }

  /**
   * Compute a Dask-style graph (`{key: [fn, ...args]}`, see `graph.ts`).
   * Returns a future for each wanted key (default: the tasks no other task
   * depends on). Graph keys are used as they are: they must not clash with
   * other computations still held.
   */
  compute(graph: Graph, options: ComputeOptions = {}): Record<string, Future> {
    this.checkOpen();
    checkComputeOptions("compute", options);
    const built = buildGraph(graph, this, options);
    return this.computeBuilt(built, wantedKeys("compute", built, options), "compute");
  }

  private computeBuilt(
    built: BuiltGraph,
    keys: readonly string[],
    op: string,
  ): Record<string, Future> {
    // An alias's future is that of the task it stands for.
    const taskKeys = built.aliases.size === 0 ? keys : keys.map((k) => built.aliases.get(k) ?? k);
    for (const key of keys) {
      if (built.literals.has(key)) {
        throw new TypeError(`${op}: ${showValue(key, 200)} is a literal in the graph, not a task`);
      }
      if (!built.tasks.has(key) && !built.aliases.has(key)) {
        throw new TypeError(`${op}: the graph has no key ${showValue(key, 200)}`);
      }
    }
    const futures = this.submissions.submit(built.tasks, taskKeys);
    const out: Record<string, Future> = {};
    for (let i = 0; i < keys.length; i++) out[keys[i]] = futures[i];
    return out;
  }

  /**
   * Compute a graph and return the values of the wanted keys (literals
   * included), releasing everything afterwards (Dask's `client.get`).
   */
  async get(graph: Graph, options: ComputeOptions = {}): Promise<Record<string, unknown>> {
    // Even a graph of literals only: a closed client answers nothing.
    this.checkOpen();
    checkComputeOptions("get", options);
    const built = buildGraph(graph, this, options, "get");
    // By default the literals no task uses too: `{a: 5}` gives `{a: 5}`.
    const wanted =
      options.keys === undefined ? built.unusedKeys : wantedKeys("get", built, options);
    const out: Record<string, unknown> = {};
    const taskKeys: string[] = [];
    for (const key of wanted) {
      // Every key set now, so the result lists them in the order wanted.
      out[key] = built.literals.get(key);
      if (!built.literals.has(key)) taskKeys.push(key);
    }
    if (taskKeys.length === 0) return out;
    // The graph built once: compute() would build it again.
    const byKey = this.computeBuilt(built, taskKeys, "get");
    // By key, not `Object.values`: an object lists integer-like keys first ("2"
    // before "b"), and the values would go to the wrong keys.
    const futures = taskKeys.map((key) => byKey[key]);
    try {
      const values = await this.gather(futures);
      for (let i = 0; i < taskKeys.length; i++) out[taskKeys[i]] = values[i];
      return out;
    } finally {
      for (const f of futures) f.release();
    }
  }

  // ---------------------------------------------------------------------------
  // Scattering
  // ---------------------------------------------------------------------------

  /**
   * Put values on workers and get futures of them (Dask's `scatter`): each
   * value travels once, and tasks that take its future as an argument read it
   * where it is (or fetch it from there) rather than receiving it with every
   * task. An array gives an array of futures, a plain object an object of
   * futures under the same names; to scatter one value, `const [f] = await
   * client.scatter([value])`. Resolves once the scheduler knows the values.
   *
   * The values are spread over the running workers (each worker as often as
   * it has threads), or put on every one with `broadcast`; `workers` limits
   * them to some workers (an address or host, or an array). Each value gets
   * a key of its own (`<type>-<uuid>`). Scattered data cannot be recomputed:
   * when every worker holding it is gone, its futures (and those of tasks
   * waiting for it) fail with `CancelledError`.
   *
   * Rejects with a `ScatterError` when no worker is running (among
   * `workers`), none of them can be reached, or a worker refuses a value;
   * what had been put on workers is released. A value that cannot be sent
   * (a function, a symbol) is refused with a TypeError.
   */
  scatter<T>(values: readonly T[], options?: ScatterOptions): Promise<Future<T>[]>;
  scatter<T extends Record<string, unknown>>(
    values: T,
    options?: ScatterOptions,
  ): Promise<{ [K in keyof T]: Future<T[K]> }>;
  async scatter(values: unknown, options: ScatterOptions = {}): Promise<unknown> {
    this.checkOpen();
    refuseWorkersGivenPositionally(options);
    knownOptionsOf("scatter", options, SCATTER_OPTIONS);
    const problem = scatterOptionsProblem(options);
    if (problem !== null) throw new TypeError(`scatter: ${problem}`);
    let names: string[] | null = null;
    let list: readonly unknown[];
    if (Array.isArray(values)) {
      list = arrayValues(values);
    } else if (typeof values === "object" && values !== null && isContainer(values)) {
      names = Object.keys(values);
      // As a name of the result object it would set its prototype (the futures lost).
      if (names.includes("__proto__")) {
        throw new TypeError('scatter: "__proto__" cannot name a value (it is refused as a key)');
      }
      list = namedValues(values as Record<string, unknown>, names);
    } else {
      throw new TypeError(
        `scatter: expected an array or a plain object of values, got ${describeScatterInput(values)}; to scatter one value: const [future] = await client.scatter([value])`,
      );
    }
    const futures = list.length === 0 ? [] : await this.scatters.scatter(list, options);
    if (names === null) return futures;
    const out: Record<string, Future> = {};
    for (let i = 0; i < names.length; i++) out[names[i]] = futures[i];
    return out;
  }

  /**
   * Copy the futures' results to more workers (Dask's `replicate`), so that
   * each is held by `n` of the running workers (default: all of them), among
   * `workers` (an address or host, or an array) when given: a result then
   * survives the loss of a worker without being computed again, and
   * scattered data, which cannot be, survives at all. Waits for the futures
   * first; rejects with the error of one that failed. The workers holding
   * fewest bytes get the copies; they fetch them from the holders, and the
   * call resolves once every copy has arrived. Rejects with a
   * `ReplicateError` naming the keys that did not get all their copies (a
   * worker left or could not fetch one, or the key was released meanwhile);
   * the copies that arrived stay. A key held by more than `n` of those
   * workers loses the copies beyond `n`, from the workers holding the most
   * bytes, but for those running a task that needs it.
   */
  async replicate(
    futures: Future | readonly Future[],
    options: { n?: number | null; workers?: string | readonly string[] | null } = {},
  ): Promise<void> {
    this.checkOpen();
    return this.admin.replicate(futures, options);
  }

  /**
   * Even out the bytes the workers hold (Dask's `rebalance`) by moving the
   * futures' results (all results in memory, of every client, without
   * futures) from the workers holding more than the mean to those holding
   * less, among `workers` (an address or host, or an array) when given.
   * Waits for the futures first; rejects with the error of one that failed.
   * A move copies the result to the recipient and, once it has arrived, drops
   * the sender's copy, so a result is never held by no one; a sender running
   * a task that needs a result keeps it. Resolves with the number of moves
   * made; rejects with a `RebalanceError` naming the keys whose move failed
   * (the recipient left or could not fetch it, or the key was released
   * meanwhile).
   */
  async rebalance(
    futures?: Future | readonly Future[] | null,
    options: { workers?: string | readonly string[] | null } = {},
  ): Promise<number> {
    this.checkOpen();
    return this.admin.rebalance(futures, options);
  }

  /**
   * Retire workers (Dask's `retire_workers`): each worker named (by address,
   * or by host for every worker there), or with `{ n }` the `n` workers the
   * scheduler picks (those running no task first, then those holding fewest
   * bytes), or with nothing the idle workers the cluster can spare (those
   * running no task, fewest bytes first, while the `memoryLimit`s of the
   * workers left add up to twice the bytes held: without limits, every idle
   * worker when nothing is held, else none), stops getting tasks; the results only it holds are copied to
   * other running workers; then the scheduler removes it and tells it to
   * close, and its unfinished tasks run elsewhere. Resolves once every worker
   * is retired or cannot be: `retired` lists the addresses retired, `failed`
   * the others with why (no other running worker could take its data, and it
   * goes on running; it holds an actor, which cannot be moved; it left first;
   * it was being retired already; no connected worker matches the name).
   */
  async retireWorkers(
    workers?: string | readonly string[] | { readonly n: number } | null,
  ): Promise<{ retired: string[]; failed: { worker: string; reason: string }[] }> {
    this.checkOpen();
    return this.admin.retireWorkers(workers);
  }

  /**
   * Restart the cluster (Dask's `Client.restart`), to start afresh (after a
   * task leaked memory, say). The scheduler forgets every task: the futures
   * of every client are cancelled (`CancelledError`, "the cluster
   * restarted"), and published datasets are dropped. Every worker closes; a
   * worker with a nanny (`weft worker --nanny`, a `LocalCluster`'s) is
   * started again by it, fresh, and imports the modules of
   * `loadTaskModules` again. Resolves once as many workers as there were are
   * connected again, or, with `waitForWorkers: false`, once the scheduler has
   * restarted. Rejects with a {@link RestartTimeoutError} if they are not
   * back within `timeoutMs` (default 30,000): a worker without a nanny comes
   * back only if something else starts it again.
   */
  async restart(options: { timeoutMs?: number; waitForWorkers?: boolean } = {}): Promise<void> {
    this.checkOpen();
    return this.admin.restart(options);
  }

  /**
   * Restart some workers (Dask's `restart_workers`), e.g. one whose memory a
   * task leaked: each worker named (by address, or by host for every worker
   * there) that has a nanny is told to close and removed, and its nanny
   * starts a fresh one; its unfinished tasks run elsewhere, and the results
   * only it held are computed again (scattered values only it held are
   * lost, as with a worker that dies). The cluster's other work goes on.
   * Resolves with `restarted` (the addresses told to close) and `failed` (the
   * others with why: no nanny, being retired, no connected worker matches the
   * name), once as many workers as there were are connected again (or at
   * once with `waitForWorkers: false`); rejects with a
   * {@link RestartTimeoutError} if they are not back within `timeoutMs`
   * (default 30,000).
   */
  async restartWorkers(
    workers: string | readonly string[],
    options: { timeoutMs?: number; waitForWorkers?: boolean } = {},
  ): Promise<{ restarted: string[]; failed: { worker: string; reason: string }[] }> {
    this.checkOpen();
    return this.admin.restartWorkers(workers, options);
  }

  /**
   * Publish `value` under `name` for any client to get (Dask's
   * `publish_dataset`): the scheduler keeps the value, and the futures in it
   * (searched in arrays and plain objects, as `gather` searches them) are
   * kept computing and their results held, whoever published them, until the
   * dataset is unpublished. The rest of the value is structured-cloned, as
   * task values are. Rejects with a `DatasetError` if a dataset of that name
   * exists (unless `override`), or if the scheduler no longer has a future's
   * key (released, cancelled); a released future or one of another client,
   * and a name starting with `weft:held/` (the hidden datasets of variables
   * and queues), are refused with a TypeError.
   */
  async publishDataset(
    name: string,
    value: unknown,
    options: { override?: boolean } = {},
  ): Promise<void> {
    this.checkOpen();
    checkDatasetName("publishDataset", name);
    if (name.startsWith(HELD_DATASET_PREFIX)) {
      // listDatasets hides them: a dataset published there would seem gone.
      throw new TypeError(
        `publishDataset: ${JSON.stringify(name)}: names starting with ${HELD_DATASET_PREFIX} are kept for the values of variables and queues`,
      );
    }
    const { override } = knownOptionsOf("publishDataset", options, PUBLISH_OPTIONS);
    checkOptionalBoolean("publishDataset", "override", override);
    await this.datasets.publish("publishDataset", name, value, override === true);
  }

  /**
   * The dataset published under `name` (Dask's `get_dataset`), with futures
   * of this client in place of the publisher's: they hold the keys as any
   * future does, even once the dataset is unpublished. Without a dataset of
   * that name, resolves with `options.default` if given, else rejects with a
   * `DatasetError`.
   */
  async getDataset<T = unknown>(name: string, options: { default?: T } = {}): Promise<T> {
    this.checkOpen();
    checkDatasetName("getDataset", name);
    knownOptionsOf("getDataset", options, DEFAULT_OPTIONS);
    const answer = await this.datasets.get(name);
    if (answer.found) return answer.value as T;
    if ("default" in options) return options.default as T;
    throw new DatasetError(`getDataset: no dataset ${JSON.stringify(name)}`);
  }

  /**
   * Forget the dataset published under `name` (Dask's `unpublish_dataset`):
   * its futures' keys are let go unless a client or task still needs them.
   * Resolves with whether there was such a dataset.
   */
  async unpublishDataset(name: string): Promise<boolean> {
    this.checkOpen();
    checkDatasetName("unpublishDataset", name);
    return this.datasets.unpublish(name);
  }

  /**
   * The names of the datasets published, sorted (Dask's `list_datasets`);
   * not those holding the futures of variables and queues.
   */
  async listDatasets(): Promise<string[]> {
    this.checkOpen();
    const names = (await this.conn.request("list-datasets")) as string[];
    return names.filter((name) => !name.startsWith(HELD_DATASET_PREFIX));
  }

  /**
   * `futures` (one, or an array) as an array; a TypeError naming `op` unless
   * each is a future of this client.
   */
  private ownFutures(op: string, futures: Future | readonly Future[]): readonly Future[] {
    const list: unknown = futures instanceof Future ? [futures] : futures;
    if (!Array.isArray(list)) {
      throw new TypeError(`${op}: expected futures of this client, got ${showValue(futures)}`);
    }
    for (const f of list) {
      if (!(f instanceof Future) || f.host !== this) {
        throw new TypeError(`${op}: expected futures of this client, got ${showValue(f)}`);
      }
    }
    return list as readonly Future[];
  }

  // ---------------------------------------------------------------------------
  // Results
  // ---------------------------------------------------------------------------

  /**
   * The results of futures: the same shape with every future replaced by its
   * result, searched (as Dask's `gather`) in arrays and plain objects at any
   * depth; other values stand for themselves.
   */
  gather<T>(future: Future<T>): Promise<T>;
  gather<T extends readonly unknown[] | []>(futures: T): Promise<Gathered<T>>;
  // Any object type but the ones not searched: interfaces are not Record<string, unknown>.
  gather<T extends object>(futures: T extends NotSearched ? never : T): Promise<Gathered<T>>;
  async gather(futures: unknown, ...extra: unknown[]): Promise<unknown> {
    refuseGatherErrors(extra);
    if (futures instanceof Future) return futures.result();
    if (typeof futures !== "object" || futures === null || !isContainer(futures)) {
      throw new TypeError(
        `gather: expected a future, or an array or plain object holding futures, got ${describeGatherInput(futures)}`,
      );
    }
    return await this.heldWhile(this.results.gather(futures));
  }

  /**
   * @internal The result of `key`: waits until it is done, then fetches it.
   * `holder` (the future, or the array of futures being gathered) is strongly
   * held until then, so that the garbage collector cannot release the key
   * while its result is awaited.
   */
  resultOf(key: string, holder: object): Promise<unknown> {
    return this.heldWhile(this.results.resultOf(key, holder));
  }

  /**
   * `awaited`, the process kept alive until it settles: a result is fetched
   * from a worker once the scheduler said where it is (see `LoopHold`).
   */
  private heldWhile<T>(awaited: Promise<T>): Promise<T> {
    const release = this.conn.holdLoop();
    return awaited.finally(release);
  }

  /**
   * Cancel the futures' tasks and those depending on them that no other client
   * wants (all of them, with `force`); resolves once the scheduler has
   * answered, when these futures (and those of the cancelled dependents) are
   * `cancelled` and reject with `CancelledError`. A key another client wants
   * too is cancelled for this client only.
   */
  async cancel(
    futures: Future | readonly Future[],
    options: { force?: boolean } = {},
  ): Promise<void> {
    // Checked, as `force` below: a key string in the list, or a force that is not a
    // boolean, went out as it was, the scheduler refused the message, and the cancel
    // waited for an answer forever. (A future of another client is fine: this client
    // then cancels nothing of it.)
    const list: unknown = futures instanceof Future ? [futures] : futures;
    if (!Array.isArray(list)) {
      throw new TypeError(`cancel: expected futures, got ${showValue(futures)}`);
    }
    for (const f of list) {
      if (!(f instanceof Future))
        throw new TypeError(`cancel: expected futures, got ${showValue(f)}`);
    }
    const { force } = knownOptionsOf("cancel", options, CANCEL_OPTIONS);
    checkOptionalBoolean("cancel", "force", force);
    await this.cancelKeys(
      (list as readonly Future[]).map((f) => f.key),
      force,
    );
  }

  /**
   * Run the futures' tasks to the end even once no future of them is left
   * (Dask's `fire_and_forget`): for tasks run for what they do rather than
   * for their result. The scheduler holds each key until its task is done,
   * running it again if a worker is lost meanwhile, and then lets its result
   * go. The futures stay usable, but releasing them, or closing the client,
   * no longer stops their tasks; `cancel` with `force` still does. A future
   * already done is skipped; a released one is refused with a TypeError.
   */
  fireAndForget(futures: Future | readonly Future[]): void {
    this.checkOpen();
    const keys = new Set<string>();
    for (const f of this.ownFutures("fireAndForget", futures)) {
      const status = f.status;
      if (status === "released") {
        throw new TypeError(`fireAndForget: the future of ${f.key} was released`);
      }
      if (status === "pending" || status === "no-worker") keys.add(f.key);
    }
    if (keys.size === 0) return;
    this.conn.send({
      op: "fire-and-forget",
      keys: [...keys],
      clientId: this.id,
      stimulusId: newStimulusId("fire-and-forget"),
    });
  }

  /** @internal */
  async cancelKeys(keys: readonly string[], force = false): Promise<void> {
    this.checkOpen();
    this.flushReleases();
    await this.cancels.request(keys, force);
  }

  /**
   * Compute the failed futures' tasks again (Dask's `Client.retry`): each
   * erred future's task, and the erred inputs it failed with, run anew.
   * Resolves once the scheduler has sent them back to be computed: this
   * client's futures of them are pending then, and settle with the new
   * outcome (other clients' futures of them too, once told). A future that did not
   * fail is left as it is. Resolves with the keys of `futures` sent back (not
   * the inputs sent back with them).
   */
  async retry(futures: Future | readonly Future[]): Promise<string[]> {
    this.checkOpen();
    const list: readonly unknown[] = futures instanceof Future ? [futures] : futures;
    if (!Array.isArray(list)) {
      throw new TypeError(
        `retry: expected a future or an array of futures, got ${showValue(futures)}`,
      );
    }
    const keys: string[] = [];
    for (const f of list) {
      if (!(f instanceof Future))
        throw new TypeError(`retry: expected futures, got ${showValue(f)}`);
      if (f.host !== this) throw new TypeError(`retry: ${f.key} is a future of another client`);
      if (this.records.get(f.key)?.status === "error") keys.push(f.key);
    }
    if (keys.length === 0) return [];
    this.flushReleases();
    return (await this.conn.request("retry", { keys })) as string[];
  }

  /**
   * Run the task function `fn` (a definition or a registered name) on `args`
   * on every worker, outside any graph (Dask's `Client.run`): for setting
   * workers up, or looking at them. Each runs it as it runs a task, holding one
   * of its threads. Resolves with `{worker address: value}`; rejects with the
   * `RunError` of the first worker (by address) where it failed.
   */
  run(
    fn: TaskDefinition<TaskFunction> | string,
    ...args: unknown[]
  ): Promise<Record<string, unknown>> {
    return this.runOn("run", {}, fn, args);
  }

  /**
   * {@link run} with options: `workers` (addresses, hosts or names) to run on, each
   * entry no connected worker matches failing as a worker that cannot be reached;
   * `onError`.
   */
  async runWith(
    options: RunOptions,
    fn: TaskDefinition<TaskFunction> | string,
    ...args: unknown[]
  ): Promise<Record<string, unknown>> {
    return this.runOn("runWith", options, fn, args);
  }

  /** {@link run} and {@link runWith}, whose errors name `op`. */
  private async runOn(
    op: string,
    options: RunOptions,
    fn: TaskDefinition<TaskFunction> | string,
    args: unknown[],
  ): Promise<Record<string, unknown>> {
    this.checkOpen();
    checkKnownOptions(op, optionsOf(op, options, true), RUN_OPTIONS);
    const name = taskName(fn, op);
    const onError = options.onError ?? "raise";
    if (onError !== "raise" && onError !== "return") {
      throw new TypeError(`${op}: onError must be "raise" or "return", got ${showValue(onError)}`);
    }
    const connected = await this.workers();
    const addresses = await workersNamed(op, options, async () => connected);
    // As Dask's run fails for an address it cannot reach: a typo must not look like a worker
    // that ran it, nor an empty answer like one from every worker named.
    const unmatched = unmatchedSelectors(options, connected).map(
      (selector) => new RunError(selector, "no connected worker matches it"),
    );
    if (unmatched.length > 0 && onError === "raise") throw unmatched[0];
    const out = await this.cuttingLeavers(
      runOnWorkers(this.peers, addresses, this.id, name, args, onError),
    );
    for (const err of unmatched) out[err.worker] = err;
    return out;
  }

  /**
   * Import more task modules on every worker, for their tasks from now on
   * (Dask's `upload_file`, for modules already on the workers' machines):
   * paths (resolved against this process's directory) or file URLs, which
   * each worker must find on its own machine. The scheduler keeps them, so
   * that every worker joining later imports them before anything else.
   * Resolves with `{worker address: task functions it defines}`; rejects with
   * the `TaskModuleError` of the first worker (by address) that could not
   * import them, or could not be asked.
   */
  async loadTaskModules(
    modules: string | URL | readonly (string | URL)[],
  ): Promise<Record<string, readonly string[]>> {
    this.checkOpen();
    const list = (Array.isArray(modules) ? modules : [modules]) as (string | URL)[];
    if (list.length === 0) throw new TypeError("loadTaskModules: no module given");
    const urls = list.map(taskModuleUrl);
    return onEveryWorker(
      () => this.workers(),
      (addresses) =>
        this.cuttingLeavers(loadOnWorkers(this.peers, addresses, urls, this.leftTheCluster)),
      async (asked) =>
        unaskedIn(
          "loadTaskModules",
          await this.conn.request("load-task-modules", { modules: urls, ...askedFields(asked) }),
        ),
    );
  }

  /**
   * Send a file to every worker, which saves it and, if it is a task module,
   * imports it for its tasks from now on (Dask's `upload_file`): so that
   * workers on other machines run tasks of a module only the client's machine
   * has. `path` is a path (resolved against this process's directory) or a
   * `file:` URL, of at most 64 MiB. Each worker keeps its uploads side by side
   * in a directory of its own (removed when it closes): an uploaded module
   * imports another uploaded module, or reads an uploaded data file, by a
   * relative URL (`new URL("./table.json", import.meta.url)`), and imports
   * packages by name as from the worker's working directory, else weft's.
   * Upload what a module imports before the module. The scheduler keeps the
   * file: workers joining later, and those a restart starts, save and import
   * it as they register, before the modules of `loadTaskModules`.
   *
   * Workers accept uploads only when started to (`weft worker
   * --allow-uploads`, the Worker option `acceptUploads`; a `LocalCluster`'s
   * do): an upload runs code of the client's choosing there.
   *
   * `load` (default: true for `.js`, `.mjs`, `.cjs`, `.ts`, `.mts`, `.cts` and
   * `.tsx` files) imports the file once saved. The same file again changes
   * nothing; another file under a name already uploaded is refused (modules
   * stay imported: give it another name). Resolves with `{worker address:
   * task functions it defines}`; rejects with a TypeError for a file that
   * cannot be uploaded, or with the `UploadError` (`worker`, `file`,
   * `reason`) of the first worker, by address, that could not save or import
   * it (then no later worker is given it).
   */
  async uploadFile(
    path: string | URL,
    options: UploadFileOptions = {},
  ): Promise<Record<string, readonly string[]>> {
    this.checkOpen();
    const file = await readUpload(path, options);
    return onEveryWorker(
      () => this.workers(),
      (addresses) =>
        this.cuttingLeavers(uploadToWorkers(this.peers, addresses, file, this.leftTheCluster)),
      async (asked) =>
        unaskedIn(
          "uploadFile",
          await this.conn.request("upload-file", { ...file, ...askedFields(asked) }),
        ),
    );
  }

  /**
   * Close the cluster, then this client (Dask's `Client.shutdown`): every worker
   * is told to close, as when retired (a `weft worker` exits 0, and its nanny
   * does not start it again), then the scheduler closes. Other clients of the
   * cluster lose it too: their futures fail. Resolves with the addresses of the
   * workers told once the scheduler has closed its connections (it no longer
   * accepts any then: a client connecting next is refused, and a
   * `LocalCluster`'s `client()` rejects), or after the client's `timeoutMs` if
   * it has not by then; the workers close on their own time.
   */
  async shutdown(): Promise<string[]> {
    this.checkOpen();
    const workers = (await this.conn.request("shutdown", {})) as string[];
    this.shutdownAnswered = true;
    // As Dask's, which awaits the scheduler's terminate: returning sooner, a client made next
    // would connect to the closing scheduler and be dropped by it.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs);
    });
    await Promise.race([this.conn.ended, waited]).finally(() => clearTimeout(timer));
    await this.close();
    return workers;
  }

  /**
   * Run a worker plugin on every worker, and on those joining later (Dask's
   * `register_worker_plugin`): each makes it on its main thread by calling
   * `factory`, a task function of its task modules, with `options.args` (JSON
   * data), and calls its `setup(worker)`; the state machine calls its
   * `transition(key, start, finish)` after every transition, and the worker
   * its `teardown(worker)` when the plugin is removed or replaced or the worker
   * closes (see `WorkerPluginHooks`). `options.name` (default: the task
   * function's name) replaces a plugin of that name. Resolves with `{worker
   * address: "OK"}`; rejects with the {@link WorkerPluginError} of the first
   * worker, by address, whose plugin could not be made or set up (the plugin is
   * then not kept there, and not recorded for the workers to come).
   */
  async registerWorkerPlugin(
    factory: TaskDefinition<TaskFunction> | string,
    options: WorkerPluginOptions = {},
  ): Promise<Record<string, "OK">> {
    this.checkOpen();
    return this.registerOnEach(
      "registerWorkerPlugin",
      "worker",
      workerPluginSpec(factory, options),
    );
  }

  /**
   * Remove the worker plugin `name` from every worker, tearing it down, and
   * from the workers to come (Dask's `unregister_worker_plugin`). Resolves
   * with `{worker address: whether it had the plugin}` (one whose
   * registration failed is taken off the workers that set it up); rejects if
   * no plugin of that name was registered and no worker has one, or with the
   * {@link WorkerPluginError} of the first worker, by address, whose teardown
   * threw (the others are torn down). Begins once this client's registrations
   * of `name` under way are over, which would record it after.
   */
  unregisterWorkerPlugin(name: string): Promise<Record<string, boolean>> {
    return this.unregisterOnEach("unregisterWorkerPlugin", "worker", name);
  }

  /**
   * Run a nanny plugin in the nanny of every worker that has one (`weft worker
   * --nanny`), and of those joining later (Dask's `register_worker_plugin`
   * with `nanny=True`; see `NannyPluginHooks`): each worker hands it to its
   * nanny, which makes it in its own process by calling `factory`, a task
   * function of the worker's own task modules (`--tasks`), or the built-in
   * {@link environ}, with `options.args` (JSON data), and calls its
   * `setup(nanny)`; with `restart` (`options.restart`, else the plugin's own),
   * the nanny then starts its worker again, a fresh process. The nanny calls
   * its `teardown(nanny)` when it is removed or replaced, and as the nanny
   * stops. `options.name` (default: the task function's name) replaces a
   * plugin of that name; the same plugin given again (same name, factory,
   * args and restart) is there already, and is not set up again. Workers
   * without a nanny are skipped. Resolves with `{worker address: "OK"}`;
   * rejects with the {@link NannyPluginError} of the first worker, by
   * address, whose nanny could not make or set it up, or that has no nanny
   * taking plugins (a `LocalCluster`'s); it is then not recorded for the
   * workers to come.
   */
  async registerNannyPlugin(
    factory: TaskDefinition<TaskFunction> | string,
    options: NannyPluginOptions = {},
  ): Promise<Record<string, "OK">> {
    this.checkOpen();
    return this.registerOnEach("registerNannyPlugin", "nanny", nannyPluginSpec(factory, options));
  }

  /**
   * Remove the nanny plugin `name` from the nanny of every worker that has
   * one, tearing it down, and from the workers to come (Dask's
   * `unregister_worker_plugin` with `nanny=True`); workers are not restarted.
   * Resolves with `{worker address: whether its nanny had the plugin}`;
   * rejects if no nanny plugin of that name was registered and no nanny has
   * one (one whose registration failed is taken off the nannies that set it
   * up), or with the {@link NannyPluginError} of the first worker, by address,
   * whose teardown threw.
   */
  unregisterNannyPlugin(name: string): Promise<Record<string, boolean>> {
    return this.unregisterOnEach("unregisterNannyPlugin", "nanny", name);
  }

  /**
   * {@link unregisterWorkerPlugin} (`kind` "worker") and
   * {@link unregisterNannyPlugin} ("nanny"), `what` naming the call.
   */
  /**
   * Set up the worker or nanny plugin `spec` on every worker that takes it,
   * and have the scheduler record it for those to come (the other workers it
   * asks, joined meanwhile): what `registerWorkerPlugin` and
   * `registerNannyPlugin` do, tracked so that an unregistration of the name
   * begins once it is over.
   */
  private registerOnEach(
    what: string,
    kind: "worker" | "nanny",
    spec: WorkerPluginSpec,
  ): Promise<Record<string, "OK">> {
    const op = kind === "worker" ? "register-worker-plugin" : "register-nanny-plugin";
    const [holders, rpcs] =
      kind === "worker"
        ? [() => this.workers(), WORKER_PLUGIN_RPCS]
        : [() => this.nannyWorkers(), NANNY_PLUGIN_RPCS];
    return this.registrations.track(
      kind,
      spec.name,
      onEveryWorker(
        holders,
        (addresses) =>
          this.cuttingLeavers(
            addOnEach(this.peers, addresses, spec, rpcs, (address) =>
              leftTheCluster(address, holders),
            ),
          ),
        async (asked) =>
          unaskedIn(what, await this.conn.request(op, { ...spec, ...askedFields(asked) })),
      ),
    );
  }

  private async unregisterOnEach(
    what: string,
    kind: "worker" | "nanny",
    name: string,
  ): Promise<Record<string, boolean>> {
    this.checkOpen();
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`${what}: name must be a non-empty string, got ${showValue(name)}`);
    }
    // A registration of it on its way records it once over: after, not before, this.
    await this.registrations.settled(kind, name);
    const op = kind === "worker" ? "unregister-worker-plugin" : "unregister-nanny-plugin";
    const [holders, rpcs] =
      kind === "worker"
        ? [() => this.workers(), WORKER_PLUGIN_RPCS]
        : [() => this.nannyWorkers(), NANNY_PLUGIN_RPCS];
    return unregisterPlugin(
      op,
      kind,
      name,
      () => this.conn.request(op, { name }),
      async () => {
        const addresses = (await holders()).map((w) => w.address);
        return sortedByKey(
          await this.cuttingLeavers(removeOnEach(this.peers, addresses, name, rpcs)),
        );
      },
    );
  }

  /** The connected workers that have a nanny: those nanny plugins go to. */
  private async nannyWorkers(): Promise<WorkerIdentity[]> {
    return (await this.workers()).filter((w) => w.nanny);
  }

  /**
   * Run the task function `fn` (a definition or a registered name) on `args`
   * in the scheduler's process (Dask's `run_on_scheduler`): for looking at the
   * scheduler, or changing it, from a client. The function gets the scheduler
   * from `currentScheduler()` (of `weft/scheduler`) and may return a promise.
   * The scheduler finds it in its task modules: its own (`weft scheduler
   * --tasks`, the Scheduler option `taskModules`; a `LocalCluster` gives it
   * its `taskModules`) or the cluster's (`loadTaskModules`), imported when
   * first needed. Arguments and result cross as task values do. Resolves with
   * its value; rejects with a {@link RunError} (its `worker` the scheduler's
   * address) carrying what it threw, or why it could not run.
   */
  async runOnScheduler(
    fn: TaskDefinition<TaskFunction> | string,
    ...args: unknown[]
  ): Promise<unknown> {
    this.checkOpen();
    const name = taskName(fn, "runOnScheduler");
    let response: unknown;
    try {
      response = await this.conn.request("run-on-scheduler", { fn: name, args: runArgs(args) });
    } catch (err) {
      // The function ran, but its result could not be sent (too large, not encodable): a
      // RunError as for any other failure of the run, the scheduler's reason its text.
      if (err instanceof SchedulerReplyError) {
        throw new RunError(this.address, err.reason, "", { cause: err });
      }
      throw err;
    }
    return runOutcome(this.address, response);
  }

  /**
   * Add a scheduler plugin (Dask's `register_scheduler_plugin`; see
   * `SchedulerPlugin` of `weft/scheduler`): the scheduler makes it by calling
   * `factory`, a task function of its task modules (as for
   * {@link runOnScheduler}), with `options.args` (JSON data), adds it under
   * `options.name` (default: the task function's name), replacing one of that
   * name, and awaits its `start(scheduler)`. Resolves with the names of the
   * scheduler's plugins; rejects if the function is unknown or throws, if it
   * returns no plugin, or if the plugin's start throws (it is then not kept).
   */
  async registerSchedulerPlugin(
    factory: TaskDefinition<TaskFunction> | string,
    options: WorkerPluginOptions = {},
  ): Promise<string[]> {
    this.checkOpen();
    const spec = workerPluginSpec(factory, options, "registerSchedulerPlugin");
    return (await this.conn.request("register-scheduler-plugin", { ...spec })) as string[];
  }

  /**
   * Remove the scheduler plugin `name`, awaiting its `close()` (Dask's
   * `unregister_scheduler_plugin`). Resolves with whether there was one;
   * rejects if its close throws.
   */
  async unregisterSchedulerPlugin(name: string): Promise<boolean> {
    this.checkOpen();
    if (typeof name !== "string" || name === "") {
      throw new TypeError(
        `unregisterSchedulerPlugin: name must be a non-empty string, got ${showValue(name)}`,
      );
    }
    return (await this.conn.request("unregister-scheduler-plugin", { name })) as boolean;
  }

  /**
   * The cluster's semaphore `name` (Dask's `Semaphore`): at most `maxLeases`
   * (default 1) leases held at once by all clients and their tasks; every
   * user of the name must give the same `maxLeases`. See `coordination.ts`.
   */
  semaphore(name: string, options: { readonly maxLeases?: number | null } = {}): Semaphore {
    const { maxLeases } = knownOptionsOf("semaphore", options, SEMAPHORE_OPTIONS);
    return new Semaphore(this.coordinationRequest, name, maxLeases ?? 1, this.leases);
  }

  /** The cluster's lock `name` (Dask's `Lock`): held by one `Lock` object at a time. */
  lock(name: string): Lock {
    return new Lock(this.coordinationRequest, name, this.leases);
  }

  /**
   * The cluster's locks `names`, taken together (Dask's `MultiLock`): all of
   * them, or `numLocks` of them, at once. Their names are apart from `lock`'s.
   */
  multiLock(names: readonly string[]): MultiLock {
    return new MultiLock(this.coordinationRequest, names, this.leases);
  }

  /** The cluster's event `name` (Dask's `Event`): set or clear, waited for. */
  event(name: string): Event {
    return new Event(this.coordinationRequest, name);
  }

  /** The cluster's variable `name` (Dask's `Variable`): data, or futures in it too. */
  variable<T = unknown>(name: string): Variable<T> {
    return new Variable<T>(this.coordinationRequest, this.datasets.held, name, this.sendOrder);
  }

  /**
   * The cluster's queue `name` (Dask's `Queue`), holding at most
   * `maxsize` items (default 0: no bound); every user of the name must give
   * the same `maxsize`.
   */
  queue<T = unknown>(name: string, options: { readonly maxsize?: number | null } = {}): Queue<T> {
    const { maxsize } = knownOptionsOf("queue", options, QUEUE_OPTIONS);
    return new Queue<T>(
      this.coordinationRequest,
      this.datasets.held,
      name,
      maxsize ?? 0,
      this.sendOrder,
    );
  }

  /**
   * A publisher of `name` (Dask's `Pub`): `put(msg)` sends a copy of `msg` to
   * every client subscribed to `name` at the time, without waiting. See `pubsub.ts`.
   */
  pub<T = unknown>(name: string): Pub<T> {
    return new Pub<T>(this.pubsub.link, name);
  }

  /**
   * A subscriber of `name` (Dask's `Sub`), once the scheduler has the
   * subscription: every message put under `name` after this resolves reaches
   * it (`get()`, `for await`), in the order each publisher put them, until it
   * is closed; with `maxBuffered`, at most that many wait, the oldest dropped
   * beyond. See `pubsub.ts`.
   */
  async sub<T = unknown>(name: string, options: SubOptions = {}): Promise<Sub<T>> {
    this.checkOpen();
    return this.pubsub.add<T>(name, knownOptionsOf("sub", options, SUB_OPTIONS));
  }

  /** The requests of the coordination primitives: the scheduler's refusals name the method that asked. */
  private readonly coordinationRequest: CoordinationRequest = async (method, op, fields) => {
    this.checkOpen();
    try {
      return await holdAliveUntilAnswered(this.conn.request(op, fields), fields.timeoutMs);
    } catch (err) {
      if (!(err instanceof SchedulerReplyError)) throw err;
      throw new SchedulerReplyError(err.op, err.reason, method);
    }
  };

  /**
   * The task runs the workers reported (Dask's `get_task_stream`), oldest
   * first: each task's key, worker, status (`"OK"`, `"error"`), result bytes,
   * and `startstops`, the wall-clock seconds of its compute and of the
   * transfers it waited for. `since` (wall-clock seconds, as `Date.now() /
   * 1000`) keeps the runs ending then or later, `count` the last so many. The
   * scheduler keeps the last 100,000 (its `taskStreamLength`).
   */
  async getTaskStream(
    options: { readonly since?: number | null; readonly count?: number | null } = {},
  ): Promise<TaskStreamRecord[]> {
    this.checkOpen();
    const { since, count } = nullsAsDefaults(
      knownOptionsOf("getTaskStream", options, TASK_STREAM_OPTIONS),
      ["since", "count"],
    );
    if (since !== undefined && !Number.isFinite(since)) {
      throw new TypeError(
        `getTaskStream: since must be a number of seconds, got ${showValue(since)}`,
      );
    }
    if (count !== undefined && (!Number.isSafeInteger(count) || count < 0)) {
      throw new TypeError(`getTaskStream: count must be an integer ≥ 0, got ${showValue(count)}`);
    }
    return (await this.conn.request("task-stream", {
      ...(since !== undefined ? { since } : {}),
      ...(count !== undefined ? { count } : {}),
    })) as TaskStreamRecord[];
  }

  /**
   * The last records each worker logged (Dask's `get_worker_logs`), oldest
   * first, by worker address: each keeps its last 10,000 (its `logLength`),
   * at the levels its logger lets through. `n`: the last `n` of each;
   * `workers`: only these (addresses, hosts or names). Rejects naming the first
   * worker (by address) that could not be read, or an entry of `workers` that no
   * connected worker matches.
   */
  async getWorkerLogs(given: WorkerLogsOptions = {}): Promise<Record<string, LogRecord[]>> {
    this.checkOpen();
    const options = nullsAsDefaults(knownOptionsOf("getWorkerLogs", given, WORKER_LOGS_OPTIONS), [
      "n",
      "workers",
    ]);
    const problem = logCountProblem(options.n);
    if (problem !== null)
      throw new TypeError(`getWorkerLogs: ${problem}, got ${showValue(options.n)}`);
    const connected = await this.workers();
    const addresses = await workersNamed("getWorkerLogs", options, async () => connected);
    // As Dask's fails for an address it cannot reach: a typo must not look like a worker
    // that logged nothing.
    const [unmatched] = unmatchedSelectors(options, connected);
    if (unmatched !== undefined) {
      throw new Error(
        `getWorkerLogs: cannot read the logs of ${unmatched}: no connected worker matches it`,
      );
    }
    return this.cuttingLeavers(logsOfWorkers(this.peers, addresses, options.n, this.id));
  }

  /**
   * Set the cluster's metadata at `keys` (Dask's `set_metadata`): a key, or
   * a path of keys into nested objects (`["model", "version"]`), which are
   * made on the way. The value is copied as task values are; a future cannot
   * be one. The scheduler keeps it until it is set again, or the scheduler ends.
   */
  async setMetadata(keys: string | readonly string[], value: unknown): Promise<void> {
    this.checkOpen();
    const path = metadataKeys("setMetadata", keys, false);
    await this.conn.request("set-metadata", { keys: path, value: encodeMetadata(value) });
  }

  /**
   * The cluster's metadata at `keys` (Dask's `get_metadata`; `[]`: all of
   * it), a copy of this client's own. Without a value there, resolves with
   * `options.default` if given, else rejects with a `MetadataKeyError`.
   */
  async getMetadata<T = unknown>(
    keys: string | readonly string[],
    options: { readonly default?: T } = {},
  ): Promise<T> {
    this.checkOpen();
    const path = metadataKeys("getMetadata", keys, true);
    knownOptionsOf("getMetadata", options, DEFAULT_OPTIONS);
    const answer = (await this.conn.request("get-metadata", { keys: path })) as {
      found: boolean;
      value?: unknown;
    };
    if (answer.found) return decodeMetadata(answer.value) as T;
    if ("default" in options) return options.default as T;
    throw new MetadataKeyError(`getMetadata: no metadata at ${JSON.stringify(path)}`);
  }

  /**
   * Log an event under `topic`, or under each of several topics (Dask's
   * `log_event`): the scheduler keeps it with the time (the last 100,000 of
   * each topic, its `eventsLogLength`) and sends it to the clients subscribed
   * to the topic. `msg` is copied as task values are; a future cannot be one.
   * Tasks log events through their client (`getClient()`).
   */
  async logEvent(topic: string | readonly string[], msg: unknown): Promise<void> {
    this.checkOpen();
    const topics = topicsOf("logEvent", topic);
    await this.conn.request("log-event", { topics, msg: encodeEventMessage(msg) });
  }

  /**
   * The events the scheduler keeps of `topic`, oldest first, each `[time,
   * msg]` (Dask's `get_events`); without a topic, those of every topic, by
   * topic. The scheduler logs its own under `"all"` and under each worker's
   * address: `{ action: "add-worker" | "remove-worker", worker }`.
   */
  async getEvents(topic: string): Promise<ClusterEvent[]>;
  async getEvents(): Promise<Record<string, ClusterEvent[]>>;
  async getEvents(topic?: string): Promise<ClusterEvent[] | Record<string, ClusterEvent[]>> {
    this.checkOpen();
    if (topic === undefined) {
      const all = (await this.conn.request("get-events", {})) as Record<string, unknown[]>;
      const out: Record<string, ClusterEvent[]> = {};
      for (const [name, events] of Object.entries(all)) out[name] = events.map(decodeEvent);
      return out;
    }
    const [name] = topicsOf("getEvents", topic);
    const events = (await this.conn.request("get-events", { topic: name })) as unknown[];
    return events.map(decodeEvent);
  }

  /**
   * Call `handler` with each event logged under `topic` from now on (Dask's
   * `subscribe_topic`); subscribing again replaces the handler. What the
   * handler throws is logged. Resolves once the scheduler has the
   * subscription: events logged after that reach the handler.
   */
  async subscribeTopic(topic: string, handler: EventHandler): Promise<void> {
    this.checkOpen();
    const [name] = topicsOf("subscribeTopic", topic);
    if (typeof handler !== "function") {
      throw new TypeError(
        `subscribeTopic: the handler must be a function, got ${showValue(handler)}`,
      );
    }
    this.subscriptions.set(name, handler);
    // A handler waits for events as a listener on a server does: the program
    // runs on while it is subscribed (`weft events --follow`).
    if (!this.topicHolds.has(name)) this.topicHolds.set(name, this.conn.holdLoop());
    await this.conn.request("subscribe-topic", { topic: name });
  }

  /** Stop calling the handler of `topic` (Dask's `unsubscribe_topic`). */
  async unsubscribeTopic(topic: string): Promise<void> {
    this.checkOpen();
    const [name] = topicsOf("unsubscribeTopic", topic);
    this.subscriptions.delete(name);
    this.topicHolds.get(name)?.();
    this.topicHolds.delete(name);
    await this.conn.request("unsubscribe-topic", { topic: name });
  }

  /**
   * The story of keys or stimulus ids across the cluster (Dask's `story`):
   * the records of the scheduler's transition log and of every worker's that
   * name one of them (as the task, a recommended task or the stimulus), in
   * time order, each with where it was logged. Workers keep their last
   * 100,000 records, the scheduler its last 100,000. Rejects naming the first
   * worker (by address) whose records could not be read.
   */
  async story(...keysOrStimulusIds: string[]): Promise<StoryRecord[]> {
    this.checkOpen();
    const problem = storyKeysProblem(keysOrStimulusIds);
    if (problem !== null) throw new TypeError(`story: ${problem}`);
    const scheduler = await this.conn.request("story", { keys: keysOrStimulusIds });
    const addresses = (await this.workers()).map((w) => w.address);
    const workers = await this.cuttingLeavers(
      storiesOfWorkers(this.peers, addresses, keysOrStimulusIds, this.id),
    );
    return mergedStory(scheduler, workers);
  }

  /**
   * Write the cluster's state to a file (Dask's `dump_cluster_state`): the
   * scheduler's transition log, tasks and workers, and each worker's state
   * machine, with its transition log and stimulus log, in the layout of
   * Dask's cluster dumps. `weft replay FILE` replays each worker from it and
   * `weft story KEY… FILE` tells a task's story across the cluster.
   * `filename` gets the extension of `format` (`.msgpack.gz`, the default,
   * or `.yaml`) unless it has one of that format's that `weft replay` reads
   * (`.msgpack`, `.yml`, `.yaml.gz`, …): then it is written so, gzipped or
   * not. The other format's extension is no exception, as in Dask's: `"x.yaml"`
   * with `format: "msgpack"` writes `x.yaml.msgpack.gz`. A worker that cannot be asked has the text
   * of the error in its place. A name that is a directory or ends in `/`, or
   * whose directory takes no file, is refused before the cluster is asked.
   * Resolves with the path written.
   */
  async dumpClusterState(
    filename = "weft-cluster-dump",
    options: DumpClusterStateOptions = {},
  ): Promise<string> {
    this.checkOpen();
    knownOptionsOf("dumpClusterState", options, DUMP_OPTIONS);
    const problem = dumpOptionsProblem(filename, options);
    if (problem !== null) throw new TypeError(`dumpClusterState: ${problem}`);
    const format = options.format ?? "msgpack";
    const path = dumpFileName(filename, format);
    // Before the cluster is asked: as weft dump refuses them, a name ending in / or
    // naming a directory wrote a hidden .msgpack.gz there (or DIR.msgpack.gz beside
    // it), and a directory not there failed only once every worker had answered.
    const unwritable = await dumpNameFailure(filename, path);
    if (unwritable !== null) {
      // With the code of the file error, as a failure of the write at the end has.
      throw Object.assign(new Error(`dumpClusterState: ${filename}: ${unwritable.why}`), {
        code: unwritable.code,
        path,
      });
    }
    const scheduler = joinedSchedulerDump(await this.conn.request("dump-state", {}));
    const addresses = (await this.workers()).map((w) => w.address);
    const workers = await this.cuttingLeavers(workerDumps(this.peers, addresses, this.id));
    const dump = clusterDump(scheduler, workers);
    await writing("dumpClusterState", path, () => writeClusterDump(dump, path, format));
    return path;
  }

  /** The last records the scheduler logged (Dask's `get_scheduler_logs`), oldest first; `n`: the last `n`. */
  async getSchedulerLogs(given: LogsOptions = {}): Promise<LogRecord[]> {
    this.checkOpen();
    const options = nullsAsDefaults(knownOptionsOf("getSchedulerLogs", given, LOGS_OPTIONS), ["n"]);
    const problem = logCountProblem(options.n);
    if (problem !== null) {
      throw new TypeError(`getSchedulerLogs: ${problem}, got ${showValue(options.n)}`);
    }
    return (await this.conn.request(
      "logs",
      options.n === undefined ? {} : { n: options.n },
    )) as LogRecord[];
  }

  /** The scheduler server's counters (tasks finished and erred, keys transferred, …). */
  /**
   * @internal The handle of a fetched actor result: calling through this
   * client, and keeping the actor alive as a future of it does.
   */
  actorHandle(ref: ActorRef): Actor {
    return new Actor(ref, () => Promise.resolve(this), new Future(this, ref.__weftActor));
  }

  /**
   * Cut the connection to the worker at `address` (its worker, the client of a
   * task, heard the scheduler removed it): calls on it end as network failures,
   * saying `reason`.
   * @internal
   */
  dropPeer(address: string, reason: string): void {
    this.peers.remove(address, reason);
  }

  /**
   * `work`, a call to workers, with the connections to workers the scheduler
   * no longer has cut while it waits (see `cuttingLeavers`): one that froze
   * and was removed would never answer.
   */
  private cuttingLeavers<T>(work: Promise<T>): Promise<T> {
    return cuttingLeavers(work, this.peers, () => this.workers());
  }

  /**
   * Whether a worker a call that the scheduler keeps for the workers to come
   * could not reach has left the cluster (see `leftCluster.ts`): left out of
   * the call then, rather than failing it.
   */
  private readonly leftTheCluster = (address: string): Promise<boolean> =>
    leftTheCluster(address, () => this.workers());

  /**
   * @internal Send an actor handle's `op` to the worker at `address` (see
   * {@link Actor}): its answer, or the connection's error.
   */
  async callActor(address: string, op: ActorOp, args: Record<string, unknown>): Promise<unknown> {
    this.checkOpen();
    try {
      // Before connecting to it: a worker the scheduler removed for going silent
      // (frozen: its kernel takes the connection, nothing answers) would hold the
      // call for good, its removal told before there was a connection to cut.
      if (!this.peers.has(address) && (await leftTheCluster(address, () => this.workers(), 0))) {
        throw new Error(
          `${address} is not in the cluster (the scheduler removed it, or never had it)`,
        );
      }
      const rpc = await this.peers.get(address);
      // With this end's limit: a result larger than it is refused by the worker, for this call alone.
      return await rpc.call(op, withReplyLimit(args, this.id, rpc.comm));
    } catch (err) {
      // Cut short by this client's close (its connections aborted): the caller's own
      // doing, said as such, not the actor's worker failing.
      throw this.closedError ?? err;
    }
  }

  /**
   * The scheduler server's counters: tasks finished and erred, workers and clients connected, ….
   */
  async counters(): Promise<SchedulerCounters> {
    this.checkOpen();
    return (await this.conn.request("counters")) as SchedulerCounters;
  }

  /**
   * Run `body`, then write to `path` one HTML file of what the cluster did
   * meanwhile (Dask's `performance_report`): the task stream of the whole run,
   * compute and transfer time by task prefix and by worker (with how busy each
   * worker's threads were), and the runs finished, erred and keys transferred.
   * Self-contained (no scripts or assets). Written also when `body` throws,
   * whose error is then rethrown; resolves with what `body` gives. A `path`
   * that cannot be written is refused before `body` runs (its directory must
   * be there by then: `body` cannot make it); that error, and a failure of the
   * write at the end, carry the file error's `code` and the `path`. The task
   * stream holds the scheduler's last 100,000 runs (`taskStreamLength`): the
   * report says how many it lacks. With `profile: true` the workers' threads
   * are profiled meanwhile ({@link profile}), and the report says where their
   * CPU went by thread and by function, linking the merged `.cpuprofile`.
   */
  performanceReport<T>(
    path: string | URL,
    body: () => T | Promise<T>,
    options: PerformanceReportOptions = {},
  ): Promise<T> {
    this.checkOpen();
    return performanceReport(this, path, body, options);
  }

  /**
   * CPU profiles of the workers' threads while `body` runs (Dask's
   * `Client.profile`, taken on demand): each worker's main thread and pool
   * threads are sampled by V8's profiler, every `intervalUs` (default 1,000),
   * and their profiles merged into one `.cpuprofile` (`path`, if given: Chrome
   * DevTools, VS Code and speedscope open it). Resolves with what `body` gave,
   * the merged profile, each thread's sampled and idle time, and the functions
   * that took the most time; rejects with `body`'s error (the profile written
   * all the same). `workers` limits it to some workers; workers joining
   * meanwhile are not profiled. `scheduler: true` profiles the scheduler's
   * thread too (Dask's `profile(scheduler=True)`).
   */
  async profile<T>(
    body: () => T | Promise<T>,
    options: ProfileOptions = {},
  ): Promise<ClusterProfile<T>> {
    this.checkOpen();
    return this.cuttingLeavers(
      profileWhile(
        this.peers,
        this.id,
        async () => {
          const connected = await this.workers();
          return {
            addresses: await workersNamed("profile", options, async () => connected),
            unmatched: unmatchedSelectors(options, connected),
          };
        },
        body,
        options,
        (op, args) => this.conn.request(op, args),
      ),
    );
  }

  /** The workers connected to the scheduler. */
  async workers(): Promise<WorkerIdentity[]> {
    this.checkOpen();
    return (await this.conn.request("workers")) as WorkerIdentity[];
  }

  /**
   * Wait until at least `n` workers are running (connected and not paused), as
   * Dask's `Client.wait_for_workers`: for a script that connects to a scheduler
   * before its workers have joined. Resolves with the workers connected then;
   * with `timeoutMs`, rejects with a {@link WorkersTimeoutError} if fewer are
   * running by then. Asks the scheduler every `pollMs` (default 100 ms).
   */
  async waitForWorkers(
    n: number,
    options: { timeoutMs?: number | null; pollMs?: number } = {},
  ): Promise<WorkerIdentity[]> {
    return this.admin.waitForWorkers(n, options);
  }

  /**
   * Where the scheduler says results are held (Dask's `who_has`): for each
   * future or key given, the addresses of the workers holding it (`[]` for a
   * key not in memory, or unknown). Without an argument, every key the
   * scheduler knows.
   */
  async whoHas(
    futures?: Future | string | readonly (Future | string)[] | null,
  ): Promise<Record<string, readonly string[]>> {
    this.checkOpen();
    const keys = this.keysOf("whoHas", futures);
    const fields = keys === undefined ? {} : { keys };
    return (await this.conn.request("who-has", fields)) as Record<string, string[]>;
  }

  /**
   * The size in bytes of each result, as the workers that computed or took it
   * reported it (Dask's `nbytes`): `{key: nbytes}` for the futures or keys
   * given, or for every task the scheduler knows, leaving out those whose
   * size it does not know (not computed yet, or unknown keys). With `{
   * summary: true }`, summed by key prefix (`inc-…` under `inc`).
   */
  async nbytes(
    futures?: Future | string | readonly (Future | string)[] | null,
    options: { readonly summary?: boolean } = {},
  ): Promise<Record<string, number>> {
    this.checkOpen();
    const keys = this.keysOf("nbytes", futures);
    checkOptionalBoolean(
      "nbytes",
      "summary",
      knownOptionsOf("nbytes", options, NBYTES_OPTIONS).summary,
    );
    const fields = {
      ...(keys === undefined ? {} : { keys }),
      ...(options.summary === true ? { summary: true } : {}),
    };
    return (await this.conn.request("nbytes", fields)) as Record<string, number>;
  }

  /** The keys of `futures` (futures of this client, or keys) for `op`; undefined for none given. */
  private keysOf(
    op: string,
    futures: Future | string | readonly (Future | string)[] | null | undefined,
  ): string[] | undefined {
    // None given (undefined, or null as Dask's None): every key.
    if (futures == null) return undefined;
    const list = typeof futures === "string" || futures instanceof Future ? [futures] : futures;
    if (!Array.isArray(list)) {
      throw new TypeError(`${op}: expected futures or keys, got ${showValue(futures)}`);
    }
    return list.map((f: unknown) => {
      if (f instanceof Future && f.host === this) return f.key;
      if (typeof f === "string" && f !== "") return f;
      throw new TypeError(`${op}: expected futures of this client or keys, got ${showValue(f)}`);
    });
  }

  /**
   * The keys each worker holds, as the scheduler has them (Dask's
   * `has_what`): for each address given (`[]` for one not connected), or
   * without an argument for every connected worker.
   */
  async hasWhat(
    workers?: string | readonly string[] | null,
  ): Promise<Record<string, readonly string[]>> {
    this.checkOpen();
    const fields = workerAddressesField("hasWhat", workers);
    return (await this.conn.request("has-what", fields)) as Record<string, string[]>;
  }

  /**
   * The keys each worker is processing (Dask's `processing`): assigned to it
   * by the scheduler and not yet reported done (running, or waiting there for
   * a thread or its inputs), in the order assigned. `{address: [key]}` for
   * the addresses given (`[]` for one not connected), or for every connected
   * worker.
   */
  async processing(
    workers?: string | readonly string[] | null,
  ): Promise<Record<string, readonly string[]>> {
    this.checkOpen();
    const fields = workerAddressesField("processing", workers);
    return (await this.conn.request("processing", fields)) as Record<string, string[]>;
  }

  /**
   * The threads of each worker (Dask's `nthreads`): `{address: nthreads}` for
   * the connected workers among the addresses given, or for every connected
   * worker, in address order.
   */
  async nthreads(workers?: string | readonly string[] | null): Promise<Record<string, number>> {
    this.checkOpen();
    const wanted = workerAddressesField("nthreads", workers).workers;
    const out: Record<string, number> = {};
    const connected = (await this.workers()).sort((a, b) => (a.address < b.address ? -1 : 1));
    for (const w of connected) {
      if (wanted === undefined || wanted.includes(w.address)) out[w.address] = w.nthreads;
    }
    return out;
  }

  /** @internal */
  holdersOf(key: string): readonly string[] {
    return this.records.get(key)?.holders ?? [];
  }

  // ---------------------------------------------------------------------------
  // Reference counting
  // ---------------------------------------------------------------------------

  /** @internal */
  addRef(key: string): KeyRecord {
    return this.records.addRef(key);
  }

  /** @internal */
  dropRef(key: string): void {
    this.records.dropRef(key);
  }

  /** Tell the scheduler about the keys no future refers to any more. */
  private flushReleases(): void {
    this.records.flushReleases();
  }

  // ---------------------------------------------------------------------------
  // Closing
  // ---------------------------------------------------------------------------

  private checkOpen(): void {
    if (this.closedError !== null) throw this.closedError;
  }

  private shutDown(error: Error): void {
    if (this.closedError !== null) return;
    this.closedError = error;
    this.forgetAtExit();
    for (const release of this.topicHolds.values()) release();
    this.topicHolds.clear();
    this.leases.stop();
    for (const rec of this.records.values()) rec.fail("lost", error);
    this.submissions.closed();
    // Unanswered cancels: their futures are lost now.
    this.cancels.closed();
    this.requests.failAll(error);
    this.pubsub.failAll(error);
    this.resolveClosed?.(error);
    this.resolveClosed = null;
    void this.peers.closeAll();
  }

  /**
   * Send the messages queued for the scheduler (`Pub.put`s, releases of
   * futures, …) now rather than within the next couple of milliseconds, and
   * resolve once they are on their way; at once if the client is closed. A
   * task on a pool thread has its client's flushed before its result goes, so
   * that they reach the scheduler first.
   */
  async flush(): Promise<void> {
    if (this.closedError !== null) return;
    await this.conn.flush();
  }

  /**
   * Release everything this client holds, close the connection and fail the
   * futures still waiting with `ClientClosedError` ("the client was closed",
   * followed by `why` when given). A scatter in progress stops and rejects
   * with it too, after the values it had put on workers are registered or
   * let go (waiting at most the client's `timeoutMs`), so that none stays on
   * a worker unknown to the scheduler. Idempotent.
   */
  close(why?: string): Promise<void> {
    if (why !== undefined && typeof why !== "string") {
      return Promise.reject(new TypeError(`close: why must be a string, got ${showValue(why)}`));
    }
    this.closing ??= this.closeOnce(why);
    return this.closing;
  }

  private async closeOnce(why: string | undefined): Promise<void> {
    if (this.closedError !== null) {
      await this.conn.close();
      return;
    }
    if (this.scatters.inProgress) {
      // Values a scatter stored on workers are known to nobody until the
      // scheduler hears of them: stop the scatters, and let each register or
      // let go of what it stored while the connection is still open.
      await this.scatters.stop(closedError(why));
      if (this.closedError !== null) {
        await this.conn.close();
        return;
      }
    }
    this.flushReleases();
    if (!this.conn.isClosed) {
      // A set or put cut short by the close, or a value handed back and not let go
      // yet: its hidden dataset would hold its keys for good.
      this.datasets.letGoOwed();
      this.conn.send({
        op: "close-client",
        clientId: this.id,
        stimulusId: newStimulusId("close-client"),
      });
    }
    const closed = closedError(why);
    this.shutDown(closed);
    await this.conn.close(closed);
    await this.peers.closeAll();
  }
}

/** The error of the futures a `close(why)` fails. */
function closedError(why: string | undefined): ClientClosedError {
  return new ClientClosedError(
    why === undefined ? "the client was closed" : `the client was closed: ${why}`,
  );
}

function describeScatterInput(v: unknown): string {
  if (v === null || typeof v !== "object") return v === null ? "null" : typeof v;
  return `a ${v.constructor?.name ?? "object"}`;
}

function describeGatherInput(v: unknown): string {
  if (v === null || typeof v !== "object") return v === null ? "null" : typeof v;
  return `a ${v.constructor?.name ?? "object"} (futures are searched in arrays and plain objects)`;
}
