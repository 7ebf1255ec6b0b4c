/**
 * Starting a LocalCluster's workers together: the first of them that fails
 * to start has those still starting closed. One of them may never finish
 * starting (a preload's `weftSetup` or a plugin's `setup` that never ends),
 * and the cluster's start, or its `scale`, must fail with the first error
 * rather than wait on it for good.
 */

import type { Worker } from "../worker/worker.ts";

/**
 * How long, in seconds, a LocalCluster's close of a worker waits on its
 * plugins' and preloads' teardowns and its running tasks: its workers are of
 * this process, which is waiting on them.
 */
export const WORKER_CLOSE_TIMEOUT_S = 5;

/** Workers started together; the first failure closes those still starting. */
export class StartTogether {
  /** Every worker given. */
  private readonly workers = new Set<Worker>();
  /** Those whose start is not over yet. */
  private readonly pending = new Set<Worker>();
  private firstFailure: { readonly err: unknown } | null = null;

  /** The first error a start failed with (the others were closed for it), or null. */
  get failure(): unknown {
    return this.firstFailure?.err ?? null;
  }

  /** The workers whose start is not over yet. */
  get stillStarting(): Worker[] {
    return [...this.pending];
  }

  /** True once a start failed. */
  get failed(): boolean {
    return this.firstFailure !== null;
  }

  /**
   * The worker `create` makes; one that throws (a bad option, in the
   * constructor) is a failed start like any other, and throws on.
   */
  make(create: () => Worker): Worker {
    try {
      return create();
    } catch (err) {
      this.fail(err);
      throw err;
    }
  }

  /** Start `worker` (closed at once if one failed already); rejects as its start does. */
  async start(worker: Worker): Promise<Worker> {
    this.workers.add(worker);
    this.pending.add(worker);
    if (this.firstFailure !== null) void worker.close(WORKER_CLOSE_TIMEOUT_S);
    try {
      return await worker.start();
    } catch (err) {
      this.fail(err);
      throw err;
    } finally {
      this.pending.delete(worker);
    }
  }

  /**
   * A start failed with `err` (or a worker could not be made): those still
   * starting are closed, their starts rejecting at once; those started are
   * left to the caller.
   */
  fail(err: unknown): void {
    if (this.firstFailure !== null) return;
    this.firstFailure = { err };
    for (const w of this.pending) void w.close(WORKER_CLOSE_TIMEOUT_S);
  }

  /** Close every worker given, started or not, and wait until they have closed. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.workers].map((w) => w.close(WORKER_CLOSE_TIMEOUT_S)));
  }
}
