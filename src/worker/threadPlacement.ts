/**
 * Which pool thread runs a task (piscina's `loadBalancer` for the executor).
 *
 * A task that secedes on a pool thread awaits (other tasks' results, most
 * often): its thread's event loop is free meanwhile, so the thread takes the
 * next task instead of the pool starting another thread for it (≈150 ms a
 * thread from the build, ≈1 s through tsx). A thread is given a task when it
 * runs nothing, or failing that when every task it runs has seceded (the one
 * with the fewest, so that their continuations spread); otherwise the pool
 * starts a thread, or queues the task. The worker's slot gate bounds the tasks
 * that have not seceded by the pool's minimum of threads, so a thread running
 * nothing or only seceded tasks is there whenever a task gets a slot; while
 * threads are still starting, the pool starts more.
 *
 * Jobs other than task runs (pings, collections) go only to a thread that runs
 * nothing, as piscina's own balancer places them.
 */

/** What the placement sees of a pool thread (piscina's `PiscinaWorker`). */
export interface PoolThreadView {
  /** The thread's `threadId`. */
  readonly id: number;
  /** Jobs on it (piscina: `Infinity` while it runs exactly one abortable job). */
  readonly currentUsage: number;
  readonly terminating: boolean;
  readonly destroyed: boolean;
}

interface PlacedRun {
  readonly thread: number;
  seceded: boolean;
}

interface ThreadLoad {
  /** Task runs placed on the thread, not settled. */
  runs: number;
  /** Of those, the ones that have seceded and not rejoined. */
  seceded: number;
}

/** Tracks where the executor's task runs are, and places new ones. */
export class ThreadPlacement {
  private readonly placed = new Map<number, PlacedRun>();
  private readonly loads = new Map<number, ThreadLoad>();

  /**
   * The thread for a job: the run `token`'s, or a job that is not a task run
   * (`null`); null if none may take it now. A run placed is remembered until
   * {@link settled}.
   */
  choose<T extends PoolThreadView>(token: number | null, threads: readonly T[]): T | null {
    let shared: T | null = null;
    let sharedRuns = Number.POSITIVE_INFINITY;
    for (const t of threads) {
      if (t.terminating || t.destroyed) continue;
      if (t.currentUsage === 0) return this.place(token, t);
      if (token === null) continue;
      const load = this.loads.get(t.id);
      if (load !== undefined && load.runs > 0 && load.seceded === load.runs) {
        if (load.runs < sharedRuns) {
          shared = t;
          sharedRuns = load.runs;
        }
      }
    }
    return shared === null ? null : this.place(token, shared);
  }

  private place<T extends PoolThreadView>(token: number | null, t: T): T {
    if (token === null) return t;
    const previous = this.placed.get(token);
    if (previous !== undefined) this.forget(token, previous);
    this.placed.set(token, { thread: t.id, seceded: false });
    const load = this.loads.get(t.id);
    if (load === undefined) this.loads.set(t.id, { runs: 1, seceded: 0 });
    else load.runs++;
    return t;
  }

  /** The run `token` seceded: its thread may take other tasks while every run on it has. */
  seceded(token: number): void {
    const run = this.placed.get(token);
    if (run === undefined || run.seceded) return;
    run.seceded = true;
    const load = this.loads.get(run.thread);
    if (load !== undefined) load.seceded++;
  }

  /** The run `token` rejoined (it runs on, holding a slot again). */
  rejoined(token: number): void {
    const run = this.placed.get(token);
    if (run === undefined || !run.seceded) return;
    run.seceded = false;
    const load = this.loads.get(run.thread);
    if (load !== undefined) load.seceded--;
  }

  /** The run `token` is over (ended, failed, or never placed). */
  settled(token: number): void {
    const run = this.placed.get(token);
    if (run !== undefined) this.forget(token, run);
  }

  private forget(token: number, run: PlacedRun): void {
    this.placed.delete(token);
    const load = this.loads.get(run.thread);
    if (load === undefined) return;
    load.runs--;
    if (run.seceded) load.seceded--;
    if (load.runs === 0) this.loads.delete(run.thread);
  }

  /** Task runs on thread `id`, not settled. */
  runsOn(id: number): number {
    return this.loads.get(id)?.runs ?? 0;
  }

  /** The thread run `token` was placed on, if it is placed and not settled. */
  threadOf(token: number): number | undefined {
    return this.placed.get(token)?.thread;
  }
}
