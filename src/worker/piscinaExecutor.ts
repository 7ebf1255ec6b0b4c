/**
 * The piscina executor: tasks run on a pool of worker threads, `nthreads` of
 * them computing at once; a thread whose tasks have all seceded takes the next
 * ones (`threadPlacement.ts`). Every thread imports the task modules. Arguments and results cross threads with
 * the structured-clone algorithm (`v8.serialize`), so a value that cannot be
 * cloned fails its task with a clear error.
 */

import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { serialize } from "node:v8";
import { BroadcastChannel, type Worker as Thread } from "node:worker_threads";
import { Piscina } from "piscina";
import { type DialMessage, isDialMessage, serveBridge } from "../comm/bridge.ts";
import { type Comm, DEFAULT_MAX_MESSAGE_BYTES } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { CommClosedError } from "../comm/errors.ts";
import { deserializeOwned } from "../comm/ownedDeserialize.ts";
import { asError } from "../util/asError.ts";
import { warnCallbackFailed } from "../util/callbackWarning.ts";
import { callGuarded } from "../util/guardedCall.ts";
import {
  type ExecuteJob,
  type ExecuteOutcome,
  type Executor,
  jobLabel,
  makeError,
  type RunControl,
  wallSeconds,
} from "./executor.ts";
import { ownBuffer } from "./ownBuffer.ts";
import { ThreadConnection } from "./threadConnection.ts";
import { ThreadPlacement } from "./threadPlacement.ts";
import {
  isChannelMessage,
  type ThreadInit,
  type ThreadJob,
  type ThreadReply,
} from "./threadProtocol.ts";

/** Options of {@link PiscinaExecutor.start}. */
export interface PiscinaExecutorOptions {
  /** Threads computing at once. */
  nthreads: number;
  /** File URLs of the task modules every thread imports. */
  taskModules: readonly string[];
  /**
   * Threads the pool may start beyond `nthreads`, while some are still
   * starting (a seceded task's thread takes other tasks: see
   * `threadPlacement.ts`). Default 32.
   */
  maxSecededThreads?: number;
  /** Threads beyond `nthreads` live this long once idle, in ms. Default 10,000. */
  idleTimeoutMs?: number;
  /** How long to wait for the first thread to start, in ms. Default 60,000. */
  startTimeoutMs?: number;
  /**
   * Told when a pool thread dies of an error outside any task (a task's own
   * thread dying fails the task instead): a module that does not load, or code
   * a task left running there once it returned (a timer, an unhandled
   * rejection). `lastTask` names the last task that ran on that thread, the
   * first suspect; null if none did. What it throws, or a rejection of the
   * promise it returns, is a process warning (`process.emitWarning`).
   */
  onThreadError?: (err: Error, lastTask: string | null) => void;
  /** The scheduler a task's client (`getClient()`) connects to. Default: none (it fails). */
  scheduler?: string;
  /**
   * How the threads' connections are made, on the main thread (see
   * `comm/bridge.ts`), abandoned when `signal` aborts (the peer left the
   * cluster: {@link PiscinaExecutor.peerLeft}). Default: `connect`.
   */
  dial?: (address: string, signal: AbortSignal) => Promise<Comm>;
  /**
   * The `maxMessageBytes` of the connections `dial` makes (the worker's own):
   * a thread's send over it rejects on the thread, the connection kept, where
   * the main thread could only abort the connection. Default
   * `DEFAULT_MAX_MESSAGE_BYTES`, `connect`'s.
   */
  maxMessageBytes?: number;
  /** How long a task's client waits for a connection, in ms. Default 30,000. */
  connectTimeoutMs?: number;
  /**
   * The address of the worker, which a task's client tells the scheduler it
   * serves (see `scheduler/workerClients.ts`). Default: none.
   */
  worker?: () => string;
}

const BOOTSTRAP = new URL("./threadBootstrap.mjs", import.meta.url).href;

function isReply(v: unknown): v is ThreadReply {
  return typeof v === "object" && v !== null && typeof (v as { kind?: unknown }).kind === "string";
}

/** Runs tasks on a piscina thread pool. */
export class PiscinaExecutor implements Executor {
  readonly kind = "piscina";
  /** As a pool thread reported them once it had loaded the task modules. */
  taskNames: readonly string[] = [];
  private readonly controls = new Map<number, RunControl>();
  /** Runs handed to the pool and not settled: fails them when no thread is left to run them. */
  private readonly waiting = new Set<WaitingRun>();
  private nextToken = 1;
  /** Task modules loaded since the pool started ({@link loadModules}), in order: a new list each time. */
  private loaded: readonly string[] = [];
  /** The last {@link loadModules} call, settled or not. */
  private loading: Promise<unknown> = Promise.resolve();
  /** Garbage collection jobs on their way (see {@link collectGarbage}). */
  private collecting = 0;
  private closed = false;
  /** The connections made for each pool thread (by `threadId`): ended when it ends. */
  private readonly bridges = new Map<number, Set<ThreadBridge>>();
  /** The last error a pool thread died of, if any. */
  lastThreadError: Error | null = null;
  /** The label of the last task each pool thread returned a result for, by `threadId`. */
  private readonly lastRunOn = new Map<number, string>();
  /**
   * That of the thread piscina has just destroyed, for the error it emits next
   * if the thread died of one (in the same turn: cleared after it).
   */
  private endedThreadLastRun: string | null = null;
  /**
   * Pool threads piscina terminated (an aborted run's, one idle too long) whose
   * exit has not come, by `threadId`. Piscina starts a thread in place of each
   * one whose exit it sees outside its `destroy()`: {@link close} waits for
   * them, or threads started after it would import the task modules and keep
   * the process alive that long.
   */
  private readonly ending = new Map<number, Promise<void>>();

  private constructor(
    private readonly pool: Piscina,
    /** Where the runs are: the pool's load balancer. */
    private readonly placement: ThreadPlacement,
    private readonly channel: BroadcastChannel,
    /** The task modules every thread imports as it starts. */
    private readonly initial: readonly string[],
    /** Makes the connections the threads ask for. */
    private readonly dial: (address: string, signal: AbortSignal) => Promise<Comm>,
    /** The `maxMessageBytes` of the connections {@link dial} makes. */
    private readonly maxMessageBytes: number,
    /** The worker's address, for its tasks' clients (see {@link PiscinaExecutorOptions.worker}). */
    private readonly worker: (() => string) | undefined,
  ) {
    channel.onmessage = (ev: unknown) => this.onChannelMessage((ev as { data?: unknown }).data);
  }

  /** Start the pool and wait until a thread has loaded the task modules. */
  static async start(o: PiscinaExecutorOptions): Promise<PiscinaExecutor> {
    const name = `weft-executor-${randomUUID()}`;
    const channel = new BroadcastChannel(name);
    channel.unref();
    const workerData: ThreadInit = {
      channel: name,
      taskModules: [...o.taskModules],
      scheduler: o.scheduler ?? null,
      connectTimeoutMs: o.connectTimeoutMs ?? 30_000,
    };
    const placement = new ThreadPlacement();
    const pool = new Piscina({
      filename: BOOTSTRAP,
      loadBalancer: (task, threads) => placement.choose(runToken(task), threads),
      minThreads: o.nthreads,
      maxThreads: o.nthreads + (o.maxSecededThreads ?? 32),
      idleTimeout: o.idleTimeoutMs ?? 10_000,
      workerData,
      recordTiming: false,
      // Tasks come and results go as message-port events, and an idle thread's event
      // loop turns: with piscina's default ("sync") an idle thread blocks in
      // Atomics.wait, so that what a task left behind (a timer, a stream's write, a
      // promise it did not return) waited for the thread's next task, or was lost
      // with the thread at close, where a Python thread's work in Dask goes on.
      // ("async" turns the loop too, with a shared-memory waiter besides the port's
      // events; neither measured dearer than "sync": docs/benchmarks-log.md.)
      atomics: "disabled",
    });
    const executor = new PiscinaExecutor(
      pool,
      placement,
      channel,
      [...o.taskModules],
      o.dial ?? ((address, signal) => connect(address, { signal })),
      o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      o.worker,
    );
    // A thread that fails (e.g. a task module that does not load) is reported
    // here; without a listener the pool would rethrow it on the main thread.
    pool.on("error", (err: unknown) => {
      executor.lastThreadError = asError(err);
      const failed = executor.lastThreadError;
      const lastTask = executor.endedThreadLastRun;
      // A throw here was an uncaught exception, and the runs waiting for a thread waited on.
      callGuarded(
        () => o.onThreadError?.(failed, lastTask),
        (thrown) => warnCallbackFailed("PiscinaExecutor onThreadError failed", thrown),
      );
      executor.onThreadFailed(failed);
    });
    // A thread that ends cannot say so: its connections are ended here.
    pool.on("workerDestroy", (thread: { id?: unknown }) => {
      if (typeof thread?.id !== "number") return;
      // Piscina destroys a thread that died of an error before emitting the error.
      executor.endedThreadLastRun = executor.lastRunOn.get(thread.id) ?? null;
      executor.lastRunOn.delete(thread.id);
      queueMicrotask(() => {
        executor.endedThreadLastRun = null;
      });
      executor.watchExit(thread.id);
      void executor.onThreadEnded(thread.id);
    });
    // Cleared once a thread answered: a pending timer held this function's context
    // (the executor, its pool) until it fired, so that a worker closed within
    // startTimeoutMs of its start (scaled down, restarted) stayed in memory.
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const reply: unknown = await Promise.race([
        pool.run({ kind: "ping", loaded: [] } satisfies ThreadJob),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error("timed out waiting for a pool thread to start")),
            o.startTimeoutMs ?? 60_000,
          ).unref();
        }),
      ]);
      if (!isReply(reply) || reply.kind !== "pong") throw new Error("unexpected answer to ping");
      executor.taskNames = reply.tasks;
    } catch (err) {
      await executor.close();
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`worker thread pool failed to start: ${why}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    return executor;
  }

  /**
   * Every idle pool thread collects its garbage (the worker is short of
   * memory): an idle thread allocates nothing, so V8 would not. One job per
   * idle thread, none while the last ones run; a busy thread collects as it
   * allocates.
   */
  collectGarbage(): void {
    if (this.closed || this.collecting > 0) return;
    const idle = this.pool.threads.filter((t) => this.placement.runsOn(t.threadId) === 0).length;
    for (let i = 0; i < idle; i++) {
      this.collecting++;
      this.pool
        .run({ kind: "gc" } satisfies ThreadJob)
        .catch(() => {}) // a thread that died, or the pool closed: nothing to collect
        .finally(() => this.collecting--);
    }
  }

  /**
   * Import task modules on every thread, from now on: one thread imports them
   * at once, to report the task functions or the import's error; each other
   * thread (and each one started later) before its next task. Resolves with
   * the task functions then defined. A module that fails to import there is
   * not imported anywhere else.
   */
  loadModules(urls: readonly string[]): Promise<readonly string[]> {
    // One at a time: each list must extend the last, which the threads count on.
    const next = this.loading.then(() => this.loadModulesNow(urls));
    this.loading = next.catch(() => {});
    return next;
  }

  private async loadModulesNow(urls: readonly string[]): Promise<readonly string[]> {
    if (this.closed) throw new Error("executor is closed");
    const fresh = urls.filter((u) => !this.loaded.includes(u) && !this.initial.includes(u));
    if (fresh.length === 0) return this.taskNames;
    const loaded = [...this.loaded, ...fresh];
    const reply: unknown = await this.pool.run({ kind: "ping", loaded } satisfies ThreadJob);
    if (!isReply(reply) || reply.kind !== "pong") throw new Error("unexpected answer to ping");
    this.loaded = loaded;
    this.taskNames = reply.tasks;
    return reply.tasks;
  }

  threadIds(): readonly number[] {
    return this.pool.threads.map((t) => t.threadId);
  }

  /** Threads in the pool now. */
  get threadCount(): number {
    return this.pool.threads.length;
  }

  async run(job: ExecuteJob, control: RunControl, signal: AbortSignal): Promise<ExecuteOutcome> {
    signal.throwIfAborted();
    if (this.closed) throw new Error("executor is closed");
    let args: Buffer;
    try {
      args = serialize(job.args);
    } catch (err) {
      const t = wallSeconds();
      const why = err instanceof Error ? err.message : String(err);
      return {
        status: "error",
        error: makeError(
          "DataCloneError",
          `arguments of ${jobLabel(job)} cannot be cloned: ${why}`,
        ),
        start: t,
        stop: t,
        threadId: 0,
        secededAfter: null,
      };
    }
    const token = this.nextToken++;
    this.controls.set(token, control);
    const waiting: WaitingRun = { abort: new AbortController(), startFailure: null };
    const forward = () => waiting.abort.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    this.waiting.add(waiting);
    let reply: unknown;
    try {
      const msg: ThreadJob & RunQueueOptions = {
        [Piscina.queueOptionsSymbol]: { token },
        kind: "run",
        loaded: this.loaded,
        token,
        key: job.key,
        fn: job.fn,
        args,
        hasActors: job.hasActors === true,
        ...(job.label === undefined ? {} : { label: job.label }),
      };
      // The serialized arguments are moved to the thread, not copied again.
      reply = await this.pool.run(msg, {
        signal: waiting.abort.signal,
        transferList: ownBuffer(args),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      if (waiting.startFailure !== null) throw noThreadStarted(jobLabel(job), waiting.startFailure);
      // The task's own errors come back as outcomes: a rejection is the thread
      // itself failing, maybe for code an earlier task left running there.
      throw threadDied(jobLabel(job), err);
    } finally {
      signal.removeEventListener("abort", forward);
      this.waiting.delete(waiting);
      this.controls.delete(token);
      this.placement.settled(token);
    }
    if (!isReply(reply) || reply.kind !== "done")
      throw new Error("pool thread sent an unexpected reply");
    const outcome = reply.outcome;
    // A thread known, or one still in the pool (the list looked up once a thread,
    // not for every task): one that ended meanwhile is not kept.
    const id = outcome.threadId;
    if (this.lastRunOn.has(id) || this.pool.threads.some((t) => t.threadId === id)) {
      this.lastRunOn.set(id, jobLabel(job));
    }
    if (outcome.status !== "ok") return outcome;
    try {
      // Small arrays in it copied out: they would keep the whole result's bytes allocated.
      return { ...outcome, value: deserializeOwned(outcome.value as Uint8Array) };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return {
        ...outcome,
        status: "error",
        error: makeError(
          "DataCloneError",
          `result of ${jobLabel(job)} cannot be deserialised: ${why}`,
        ),
      };
    }
  }

  /**
   * A pool thread failed outside any task: one that died idle is replaced by
   * piscina, but one that failed while starting (a task module that no longer
   * loads) is not, and piscina then keeps the runs it queued until a thread
   * comes, which none may. With no thread left, every run waiting is queued:
   * fail them with the thread's error (a later run tries a new thread).
   */
  private onThreadFailed(err: Error): void {
    if (this.closed || this.pool.threads.length > 0) return;
    for (const w of this.waiting) {
      w.startFailure = err;
      w.abort.abort(err);
    }
  }

  private onChannelMessage(msg: unknown): void {
    if (isDialMessage(msg)) {
      if (!this.closed) this.bridge(msg);
      return;
    }
    if (!isChannelMessage(msg)) return;
    const control = this.controls.get(msg.token);
    if (control === undefined) return; // the run is over
    if (msg.t === "secede") {
      this.placement.seceded(msg.token);
      control.secede(msg.after);
    } else if (msg.t === "client") {
      control.usesClient?.();
    } else if (msg.t === "rejoin") {
      const token = msg.token;
      control.rejoin().then(
        () => {
          if (this.closed) return;
          this.placement.rejoined(token);
          this.channel.postMessage({ t: "rejoined", token });
        },
        () => {
          // the worker is closing; the thread will be terminated
        },
      );
    }
  }

  /** Connect for a thread (see `comm/bridge.ts`), until either end closes or the thread ends. */
  private bridge(msg: DialMessage): void {
    const b: ThreadBridge = {
      address: msg.address,
      ended: new AbortController(),
      left: new AbortController(),
      connection: null,
    };
    let mine = this.bridges.get(msg.thread);
    if (mine === undefined) this.bridges.set(msg.thread, (mine = new Set()));
    mine.add(b);
    const dial = async (address: string) => {
      const comm = await this.dial(address, b.left.signal);
      // Made as the peer left (a dial that had got through as it was abandoned).
      if (b.left.signal.aborted) {
        comm.abort(b.left.signal.reason as Error);
        throw b.left.signal.reason;
      }
      b.connection = new ThreadConnection(comm, this.worker?.() ?? null);
      return b.connection;
    };
    void serveBridge(this.channel.name, msg, dial, b.ended.signal, this.maxMessageBytes).finally(
      () => {
        mine.delete(b);
        if (mine.size === 0 && this.bridges.get(msg.thread) === mine)
          this.bridges.delete(msg.thread);
      },
    );
  }

  /**
   * A pool thread ended (or is about to: the executor closes): its
   * connections with it, each ended as its thread would have, its client
   * saying goodbye (see `threadConnection.ts`); what is left after a grace
   * period is cut.
   */
  private async onThreadEnded(thread: number): Promise<void> {
    const mine = this.bridges.get(thread) ?? new Set<ThreadBridge>();
    this.bridges.delete(thread);
    await Promise.all(
      [...mine].map(async (b) => {
        await b.connection?.leave(LEAVE_GRACE_MS);
        b.ended.abort();
      }),
    );
  }

  /**
   * Keep the exit of the thread `id` piscina is terminating in {@link ending}:
   * it is still among the pool's threads while piscina says it is destroyed.
   */
  private watchExit(id: number): void {
    // -1: the thread has exited (piscina destroys it as its exit is emitted).
    if (id < 0) return;
    const thread: Thread | undefined = this.pool.threads.find((t) => t.threadId === id);
    if (thread === undefined || this.ending.has(id)) return;
    const exited = once(thread, "exit").then(
      () => {},
      () => {}, // an error event: the thread is gone all the same
    );
    this.ending.set(
      id,
      exited.then(() => {
        this.ending.delete(id);
      }),
    );
  }

  peerLeft(address: string, reason: string): void {
    for (const mine of this.bridges.values()) {
      for (const b of mine) {
        if (b.address !== address) continue;
        const cut = new CommClosedError(reason);
        // Still connecting too: to a frozen peer over TLS, the handshake would
        // hold the thread's call until the connect timeout.
        b.left.abort(cut);
        b.connection?.abort(cut);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Before the threads go: their clients leave the scheduler in order, not cut under it.
    await Promise.all([...this.bridges.keys()].map((thread) => this.onThreadEnded(thread)));
    this.channel.close();
    // The exit of a thread terminated before (an aborted run's) that comes after
    // destroy() has piscina start another: wait for them with it, and destroy again
    // what they started (during destroy() none is started).
    do {
      await Promise.all([this.pool.destroy(), ...this.ending.values()]);
    } while (this.pool.threads.length > 0);
  }
}

/** A connection made for a pool thread: cut by `ended`; `connection` once made. */
interface ThreadBridge {
  /** Where the thread's connection goes. */
  readonly address: string;
  readonly ended: AbortController;
  /** Aborted when the peer left the cluster: a dial still under way is abandoned. */
  readonly left: AbortController;
  connection: ThreadConnection | null;
}

/** How long a thread's connection that is ended in order may take before it is cut. */
const LEAVE_GRACE_MS = 1_000;

/** What a run's job carries for the load balancer (piscina's queue options: not sent to the thread). */
interface RunQueueOptions {
  readonly [Piscina.queueOptionsSymbol]: { readonly token: number };
}

/** The run token a job for the pool carries, or null for a job that is not a task run. */
function runToken(task: object): number | null {
  const options: unknown = (task as Partial<Record<symbol, unknown>>)[Piscina.queueOptionsSymbol];
  if (typeof options !== "object" || options === null) return null;
  const token = (options as { token?: unknown }).token;
  return typeof token === "number" ? token : null;
}

/** A run handed to the pool, abortable by the executor. */
interface WaitingRun {
  readonly abort: AbortController;
  /** Set when the run is failed because no pool thread could start. */
  startFailure: Error | null;
}

/** The error of a task that waited for a pool thread none of which could start. */
function noThreadStarted(label: string, err: Error): Error {
  const out = new Error(
    `no pool thread could start to run ${label}: ${err.name}: ${err.message} (a new thread imports the task modules first)`,
    { cause: err },
  );
  out.name = "PoolThreadStartFailed";
  return out;
}

/**
 * The error of a task whose pool thread stopped under it: said as such, since
 * what stopped it may be this task (`process.exit`) or a timer or an unhandled
 * rejection that an earlier task left on that thread.
 */
function threadDied(label: string, err: unknown): Error {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const out = new Error(
    `the pool thread running ${label} stopped: ${why} (stopped by this task's code, or by code an earlier task left running on that thread: a timer, an unhandled rejection)`,
    { cause: err },
  );
  out.name = "PoolThreadDied";
  return out;
}
