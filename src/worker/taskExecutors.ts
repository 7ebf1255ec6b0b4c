/**
 * The executors a worker runs task code on, and the modules loaded into them.
 * The main executor (inline, or a pool of threads, the `executor` option) runs
 * tasks. With a pool, actor tasks and the factories of worker plugins run on a
 * second, inline executor made beside it on first use: their objects must stay
 * on the main thread to be called (a pool thread's result is a copy). A module
 * loaded later (a client's task modules, an upload) goes into both, so that
 * they define the same task functions.
 *
 * Apart from the worker because the two executors have a life of their own
 * (started, loaded into, closed) that the worker only drives.
 */

import type { Logger } from "pino";
import { commOptionsOf } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import type { Executor } from "./executor.ts";
import { InlineExecutor } from "./inlineExecutor.ts";
import { PiscinaExecutor } from "./piscinaExecutor.ts";
import type { ResolvedWorkerOptions } from "./workerOptions.ts";

/** A worker's main executor and, with a pool, its executor of actor tasks. */
export class TaskExecutors {
  private mainExecutor: Executor | null = null;
  /** The executor of actor tasks beside a pool, once the first one asked for it. */
  private actorExecutorPromise: Promise<Executor> | null = null;
  /** The modules loaded into the executor since it started (task modules, uploads), in order. */
  private readonly loadedModules: string[] = [];

  constructor(
    private readonly options: ResolvedWorkerOptions,
    private readonly logger: Logger,
    /** The worker's address, which its tasks' clients tell the scheduler. */
    private readonly address: () => string,
  ) {}

  /** The main executor, once {@link start}ed. */
  get main(): Executor | null {
    return this.mainExecutor;
  }

  /** Start the main executor, importing the task modules. */
  async start(): Promise<Executor> {
    const o = this.options;
    this.mainExecutor =
      o.executor === "inline"
        ? await InlineExecutor.start(o.taskModules)
        : await PiscinaExecutor.start({
            nthreads: o.nthreads,
            taskModules: o.taskModules,
            maxSecededThreads: o.maxSecededThreads,
            onThreadError: (err, lastTask) =>
              this.logger.error({ err, lastTask }, "a pool thread failed"),
            scheduler: o.scheduler,
            worker: this.address,
            dial: (address, signal) =>
              connect(address, { timeoutMs: o.connectTimeoutMs, ...commOptionsOf(o), signal }),
            maxMessageBytes: o.maxMessageBytes,
            connectTimeoutMs: o.connectTimeoutMs,
          });
    return this.mainExecutor;
  }

  /**
   * Import more modules into the executor, and into the actor executor if
   * there is one: the task functions then defined (see `Executor.loadModules`).
   */
  async loadModules(urls: readonly string[]): Promise<readonly string[]> {
    const executor = this.mainExecutor as Executor;
    const tasks = await executor.loadModules(urls);
    this.loadedModules.push(...urls);
    if (this.actorExecutorPromise !== null) {
      // Made before these were pushed, or while they were: importing twice is a no-op.
      await (await this.actorExecutorPromise).loadModules(urls);
    }
    return tasks;
  }

  /** The executor of actor tasks: the inline executor itself, or one made beside the pool. */
  actor(): Promise<Executor> {
    const executor = this.mainExecutor as Executor;
    if (executor.kind === "inline") return Promise.resolve(executor);
    this.actorExecutorPromise ??= InlineExecutor.start([
      ...this.options.taskModules,
      ...this.loadedModules,
    ]).catch((err: unknown) => {
      this.actorExecutorPromise = null; // the next actor task tries again
      throw err;
    });
    return this.actorExecutorPromise;
  }

  /** The worker at `address` was removed: cut the connections of tasks' clients to it (see `Executor.peerLeft`). */
  peerLeft(address: string, reason: string): void {
    this.mainExecutor?.peerLeft?.(address, reason);
  }

  /** Close the main executor, then the actor executor if one was made. */
  async close(): Promise<void> {
    await this.mainExecutor?.close();
    const actorExecutor = await this.actorExecutorPromise?.catch(() => null);
    await actorExecutor?.close();
  }
}
