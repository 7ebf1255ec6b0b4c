/**
 * A bound on how long a close waits on code it does not control (plugins'
 * teardowns, preload modules' `weftTeardown`s): a teardown that never settles
 * must not stop a worker, nanny or scheduler from closing.
 */

import { tellFailure } from "./guardedCall.ts";
import { MAX_TIMER_MS } from "./timers.ts";

/**
 * How long, in seconds, a close waits on plugins' and preload modules'
 * teardowns when it is given no timeout (`Scheduler.close()`, a nanny
 * stopping): a worker's `close(timeout = 30)` default.
 */
export const DEFAULT_CLOSE_TIMEOUT_S = 30;

/**
 * How many waits of its timeout a worker's close makes one after another
 * (its plugins' teardowns, its preloads' `weftTeardown`s, its running
 * instructions): what bounds how long it may take.
 */
export const WORKER_CLOSE_WAITS = 3;

/**
 * What a worker's close may take beyond its bounded waits: flushing its
 * stream to the scheduler, closing its peers, thread pool and spill store,
 * and the process's own exit.
 */
const WORKER_CLOSE_SLACK_S = 10;

/**
 * How long a worker's close may take at most, in ms (100 s): its waits of up to
 * {@link DEFAULT_CLOSE_TIMEOUT_S} each, and some slack. A nanny SIGKILLs a worker
 * process that has not exited this long after its SIGTERM; the scheduler closes the
 * connection of a worker it told to close that has not closed it this long after.
 */
export const WORKER_CLOSE_MAX_MS =
  (WORKER_CLOSE_WAITS * DEFAULT_CLOSE_TIMEOUT_S + WORKER_CLOSE_SLACK_S) * 1000;

/** A moment after which a close waits on no more teardowns. */
export class CloseBudget {
  /** Resolves at the deadline; never for one of `Infinity`. */
  private readonly reached: Promise<false>;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `seconds` from now: 0, negative or NaN is now; beyond what a Node.js timer
   * waits (about 24.8 days), or `Infinity`, is never.
   */
  constructor(
    /** The seconds from its making to its deadline, as given. */
    readonly seconds: number,
  ) {
    const ms = seconds > 0 ? seconds * 1000 : 0;
    this.reached = new Promise<false>((resolve) => {
      if (ms <= MAX_TIMER_MS) {
        // Not unref'd: a process whose close waits only on a teardown that never
        // settles would otherwise exit half closed, not go on with the close.
        this.timer = setTimeout(() => resolve(false), ms);
      }
    });
  }

  /**
   * Wait until `work` settles or the deadline, whichever is first: true if it
   * settled (a rejection is not rethrown: give `work` its own handler), false if
   * the deadline came first (it still runs, unwaited).
   */
  settles(work: unknown): Promise<boolean> {
    let done = false;
    const settled = Promise.resolve(work).then(
      () => (done = true),
      () => (done = true),
    );
    // Past the deadline, what settles within the turn (a teardown that is not async) still counts.
    const late = this.reached.then(
      () => new Promise<boolean>((resolve) => setImmediate(() => resolve(done))),
    );
    return Promise.race([settled, late]);
  }

  /** Stop the timer (the close is over): it would keep the process alive until the deadline. */
  clear(): void {
    clearTimeout(this.timer);
  }
}

/** What {@link closeEachWithin} closes, and whom it tells. */
export interface CloseEach<T, Step extends string> {
  /** The deadline. */
  readonly budget: CloseBudget;
  /**
   * The step in progress that the closes come after (an add or removal of
   * the plugins' queue), waited on first: `busy()` names what still runs at the
   * deadline, if anything.
   */
  readonly inProgress?: {
    readonly settled: Promise<unknown>;
    readonly busy: () => Unfinished<Step> | null;
  };
  /** What to close, in order: asked once `inProgress` is over. */
  readonly items: () => readonly T[];
  /** The name `failed` and `unfinished` are told. */
  readonly nameOf: (item: T) => string;
  /** Close `item` (may throw, or return a promise that rejects). */
  readonly close: (item: T) => unknown;
  /** The step a close that is still running at the deadline is told as. */
  readonly closeStep: Step;
  /** Told of a close that failed (told safely: see `tellFailure`). */
  readonly failed: (name: string, err: unknown) => void;
  /** Told of what still runs at the deadline (a throw of its own is ignored). */
  readonly unfinished: (name: string, step: Step) => void;
}

/** A step still running at a close's deadline: whose, and which. */
export interface Unfinished<Step extends string> {
  readonly name: string;
  readonly step: Step;
}

/**
 * Close each item in order, each waited on until the budget's deadline at
 * most: past it, the rest are still called in order, no longer awaited, and
 * each that does not end at once is told to `unfinished`. A failure, or a
 * logger throwing on one, never ends the loop with items left open.
 */
export async function closeEachWithin<T, Step extends string>(
  o: CloseEach<T, Step>,
): Promise<void> {
  const tellUnfinished = (name: string, step: Step) => {
    try {
      o.unfinished(name, step);
    } catch {}
  };
  if (o.inProgress !== undefined && !(await o.budget.settles(o.inProgress.settled))) {
    const stuck = o.inProgress.busy();
    if (stuck !== null) tellUnfinished(stuck.name, stuck.step);
  }
  for (const item of o.items()) {
    const name = o.nameOf(item);
    const closed = (async () => o.close(item))().catch((err: unknown) =>
      tellFailure((e) => o.failed(name, e), err),
    );
    if (!(await o.budget.settles(closed))) tellUnfinished(name, o.closeStep);
  }
}
