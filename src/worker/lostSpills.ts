/**
 * What the worker does with a spilled value found gone from disk (see
 * spilledValueLost.ts): it stops claiming the key, so that the cluster
 * computes it again, or fetches it from another holder, rather than failing
 * every task that needs it.
 *
 * The state machine (a faithful port of Dask's, which has no event for a
 * value lost locally: Dask's worker raises the FileNotFoundError to every
 * reader, dask/distributed#7182) drops the key on a `RemoveReplicasEvent`:
 * memory → released, which tells the scheduler `release-worker-data`. The
 * scheduler then forgets this replica and, if it was the only one, releases
 * the key: its waiting dependents, here and elsewhere, are freed and wait for
 * it again, and it is computed again (a scattered value, which cannot be, is
 * lost to its clients with an error saying so).
 *
 * That event may only come once no task here still needs the value: the
 * handler refuses a key a running task depends on (the seed raises), and a
 * waiting or ready dependent would be left with an input in neither memory nor
 * flight. Until then the key is kept as lost: a task that needs it is
 * rescheduled ({@link LostSpills.inputLost}), a peer's or client's `get_data`
 * is answered without it (as a worker that no longer holds it answers), and
 * each batch of stimuli is followed by another try ({@link LostSpills.release}).
 *
 * A running task holding the key may be waiting for one of those it holds up
 * (it seceded, or has a client, and awaits a future of it): then neither would
 * ever end. Once only such tasks have held the key for a while, a task finding
 * it lost errs with the loss instead, as Dask errs every reader
 * ({@link LostSpills.fails}).
 *
 * A paused worker starts no task and fetches no input, and no event of the
 * state machine takes a waiting or ready task back: its dependents would keep
 * the key until it resumes, the scheduler meanwhile sending peers (and
 * clients) to fetch it here, again and again, in vain. So a paused worker asks
 * the scheduler to run them elsewhere (`reschedule`, as a task that finds its
 * input lost does): the scheduler frees them here (`free-keys`), and the key
 * drops. The scheduler assigns a paused worker nothing new, so they do not come
 * straight back.
 */

import type { Logger } from "pino";
import { newStimulusId as stimulusId } from "../util/stimulusId.ts";
import type { SpilledValueLostError } from "./spilledValueLost.ts";
import { RemoveReplicasEvent, type StateMachineEvent } from "./state/events.ts";
import type { TaskState, TaskStateState } from "./state/taskState.ts";
import type { WorkerState } from "./state/workerState.ts";

/** What dropping lost values needs of the worker. */
export interface LostSpillsHost {
  readonly state: WorkerState;
  readonly logger: Logger;
  /** Whether the data store still holds `key` as lost (not deleted or set anew since). */
  isLost(key: string): boolean;
  /** Feed the state machine (the `RemoveReplicasEvent`). */
  handleStimulus(...stims: StateMachineEvent[]): void;
  /** Ask the scheduler to run these tasks, not started here, elsewhere (`reschedule` messages). */
  reschedule(keys: readonly string[], stimulusId: string): void;
  /** Whether the running task `key` asked for a client in this run (none: no task has). */
  holdsClient?(key: string): boolean;
  /** A monotonic clock, in milliseconds (default `performance.now`). */
  now?(): number;
  /** Default {@link LOST_INPUT_HELD_MS}: the worker's `lostInputHeldMs`. */
  readonly heldMs?: number;
}

/**
 * How long a task whose input was lost waits before it is rescheduled while
 * another task here still holds that input (a running one, or one waiting for
 * other inputs): rescheduled at once, it would come straight back to this
 * worker, which the scheduler still believes holds the input, and fail again,
 * as fast as messages go. Short, as the wait holds one of the worker's threads;
 * at most: it ends once no task here holds the input (see `LostSpills.waitOut`).
 */
export const LOST_INPUT_RETRY_MS = 100;

/**
 * How long the tasks here holding a lost input may all be ones that could be
 * waiting for the task that found it lost (seceded, or holding a client: see
 * {@link LostSpills.fails}) before that task errs with the loss rather than
 * being rescheduled again. Such a holder that awaits the task never ends, so
 * it would never let the input go; one that merely holds the value may end
 * meanwhile, and then the task is computed again as usual.
 */
export const LOST_INPUT_HELD_MS = 2000;

/** The states of a dependent that still needs its inputs here (and keeps them from being dropped). */
const NEEDS_INPUTS: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "waiting",
  "ready",
  "constrained",
  "executing",
  "long-running",
]);

/**
 * Of those, the states a dependent may stay in for a while: all but `ready`
 * and `constrained`, which run as soon as a thread (and their resources) are
 * free, those the rescheduled task frees at the latest, find the input lost in
 * turn and are rescheduled too. Counting `constrained` livelocked dependents
 * sharing one resource: each, run alone, waited for the others queued behind
 * it, which came back from the scheduler as it was rescheduled, so that the
 * input was never dropped.
 */
const HOLDS_INPUTS: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "waiting",
  "executing",
  "long-running",
]);

/** Of those, the states of a dependent a paused worker keeps as they are (it starts and fetches nothing). */
const NOT_STARTED: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "waiting",
  "ready",
  "constrained",
]);

/** The states of a task whose run has not ended (cancelled or resumed: while it runs on). */
const STILL_RUNNING: ReadonlySet<TaskStateState> = new Set<TaskStateState>([
  "executing",
  "long-running",
  "cancelled",
  "resumed",
]);

/** The keys of this worker lost from disk, until the state machine drops them. */
export class LostSpills {
  private readonly pending = new Set<string>();
  /**
   * The tasks waiting {@link LOST_INPUT_RETRY_MS} to be rescheduled: running,
   * yet holding nothing (they found the input lost), so no reason for another
   * to wait. Counted as holders, two such tasks on two threads kept each other
   * waiting, and the dependents queued behind them, each sent straight back by
   * the scheduler, took their places in turn: the input was never dropped.
   */
  private readonly waitingOut = new Set<string>();
  /** Each of those's early end: once no task here holds the input, they wait for nothing. */
  private readonly wakers = new Map<string, () => void>();
  /** The dependents a paused worker asked the scheduler to reschedule, until they leave {@link NOT_STARTED}. */
  private readonly rescheduled = new Set<string>();
  /**
   * Since when (`now()`) each lost key has been held only by tasks that may be
   * waiting for the ones that found it lost (see {@link fails}).
   */
  private readonly heldByWaitersSince = new Map<string, number>();
  private releasing = false;
  private releaseQueued = false;

  constructor(private readonly host: LostSpillsHost) {}

  /** The keys found lost and not dropped yet. */
  get keys(): ReadonlySet<string> {
    return this.pending;
  }

  /**
   * A read found the spilled value of `err.key` lost: logged (once a loss) and
   * dropped as soon as no task here needs it. A microtask tries at once, as a
   * `get_data` that found it is followed by no stimulus.
   */
  lost(err: SpilledValueLostError): void {
    if (this.pending.has(err.key)) return;
    this.pending.add(err.key);
    this.host.logger.error(
      { err, key: err.key, file: err.file },
      "a spilled value is gone from disk: this worker drops the key, for the cluster to compute it again or fetch it from another holder",
    );
    if (this.releaseQueued) return;
    this.releaseQueued = true;
    queueMicrotask(() => {
      this.releaseQueued = false;
      this.release();
    });
  }

  /**
   * The task `dependent`, about to run, found its input lost (`err`): the
   * milliseconds to wait before rescheduling it: {@link LOST_INPUT_RETRY_MS}
   * while another task here may hold the input for a while, else 0 (the input is
   * dropped once the last task here that needs it is rescheduled).
   */
  inputLost(err: SpilledValueLostError, dependent: string): number {
    this.lost(err);
    const ts = this.host.state.tasks.get(err.key);
    if (ts === undefined || !neededHere(ts, HOLDS_INPUTS, dependent, this.waitingOut)) return 0;
    this.waitingOut.add(dependent);
    return LOST_INPUT_RETRY_MS;
  }

  /**
   * {@link inputLost}, as a wait: null to reschedule `dependent` at once, else
   * a promise that resolves after {@link LOST_INPUT_RETRY_MS}, or sooner, once
   * no task here holds the input any more (found by {@link release}): waiting on,
   * it would only keep the input from being dropped.
   */
  waitOut(err: SpilledValueLostError, dependent: string): Promise<void> | null {
    const ms = this.inputLost(err, dependent);
    if (ms === 0) return null;
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakers.get(dependent) === done) this.wakers.delete(dependent);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakers.set(dependent, done);
    });
  }

  /**
   * Whether the task `dependent`, about to run, is to err with `err` (its input
   * lost) rather than be rescheduled: when every task here holding the input
   * may be waiting for it, and has been so for {@link LOST_INPUT_HELD_MS}. A
   * task that seceded, or asked for a client, may await a future of one that
   * needs the same value: the input can be dropped only once it ends, and it
   * ends only once that one ends, rescheduled back here again and again
   * meanwhile. Dask errs every reader of the lost value at once; a task here
   * that merely holds the value, or that runs for long without a client,
   * still only delays the others (see {@link inputLost}).
   */
  fails(err: SpilledValueLostError, dependent: string): boolean {
    if (!this.heldByWaitersLong(err, dependent)) return false;
    this.host.logger.warn(
      { key: dependent, input: err.key },
      "a task needs a spilled value gone from disk that only tasks which may be waiting for it hold: it errs",
    );
    return true;
  }

  /**
   * Whether a peer's fetch of the lost `err.key` is to fail with `err` rather
   * than be answered without it: as {@link fails}, for a task on the peer (it
   * errs with the failed fetch). Answered without it, the peer asks the
   * scheduler where the key is, is sent back here, and asks again, for good.
   */
  failsPeer(err: SpilledValueLostError): boolean {
    if (!this.heldByWaitersLong(err, null)) return false;
    this.host.logger.warn(
      { key: err.key },
      "a peer fetches a spilled value gone from disk that only tasks which may be waiting for it hold: the fetch fails",
    );
    return true;
  }

  /**
   * Whether `err.key` (found lost) has been held here for {@link LOST_INPUT_HELD_MS}
   * (or the host's `heldMs`) only by tasks, other than `dependent`, that may be waiting for others.
   */
  private heldByWaitersLong(err: SpilledValueLostError, dependent: string | null): boolean {
    this.lost(err);
    const ts = this.host.state.tasks.get(err.key);
    if (ts === undefined || !this.heldByWaitersOnly(ts, dependent)) {
      this.heldByWaitersSince.delete(err.key);
      return false;
    }
    const now = this.host.now?.() ?? performance.now();
    const since = this.heldByWaitersSince.get(err.key) ?? now;
    this.heldByWaitersSince.set(err.key, since);
    return now - since >= (this.host.heldMs ?? LOST_INPUT_HELD_MS);
  }

  /**
   * What the task `dependent`, about to run, does with its input lost (`err`):
   * `"fail"` (see {@link fails}), else as {@link waitOut}.
   */
  verdict(err: SpilledValueLostError, dependent: string): Promise<void> | null | "fail" {
    return this.fails(err, dependent) ? "fail" : this.waitOut(err, dependent);
  }

  /**
   * Whether some task here other than `dependent` (and those waiting out the loss)
   * holds `ts`, and every one of them is running and may be waiting for others:
   * seceded, or holding a client.
   */
  private heldByWaitersOnly(ts: TaskState, dependent: string | null): boolean {
    let held = false;
    for (const dep of ts.dependents) {
      if (dep.key === dependent || this.waitingOut.has(dep.key)) continue;
      if (!HOLDS_INPUTS.has(dep.state)) continue;
      const mayWait =
        dep.state === "long-running" ||
        (dep.state === "executing" && this.host.holdsClient?.(dep.key) === true);
      if (!mayWait) return false;
      held = true;
    }
    return held;
  }

  /** Drop the lost keys no task here needs any more: after each batch of stimuli. */
  release(): void {
    for (const key of this.waitingOut) {
      // Rescheduled (or freed) since: it waits no more.
      if (!STILL_RUNNING.has(this.host.state.tasks.get(key)?.state ?? "released")) {
        this.waitingOut.delete(key);
      }
    }
    for (const key of this.rescheduled) {
      // Freed by the scheduler (or started, the worker resumed): asked for no more.
      if (!NOT_STARTED.has(this.host.state.tasks.get(key)?.state ?? "released")) {
        this.rescheduled.delete(key);
      }
    }
    if (this.pending.size === 0 || this.releasing) return;
    const keys: string[] = [];
    const elsewhere: string[] = [];
    for (const key of this.pending) {
      const ts = this.host.state.tasks.get(key);
      if (ts === undefined || ts.state !== "memory" || !this.host.isLost(key)) {
        // Released meanwhile (freed by the scheduler), or set anew: nothing to drop.
        this.pending.delete(key);
        this.heldByWaitersSince.delete(key);
        continue;
      }
      if (!neededHere(ts, HOLDS_INPUTS, null, this.waitingOut)) {
        for (const dep of ts.dependents) this.wakers.get(dep.key)?.();
      }
      if (neededHere(ts, NEEDS_INPUTS, null, null)) {
        if (!this.host.state.running) this.notStarted(ts, elsewhere);
        continue;
      }
      keys.push(key);
      this.pending.delete(key);
      this.heldByWaitersSince.delete(key);
    }
    if (elsewhere.length > 0) {
      this.host.logger.warn(
        { keys: elsewhere },
        "this worker is paused: the tasks waiting here for a spilled value gone from disk are to run elsewhere",
      );
      this.host.reschedule(elsewhere, stimulusId("spilled-input-lost"));
    }
    if (keys.length === 0) return;
    this.releasing = true;
    try {
      this.host.handleStimulus(
        new RemoveReplicasEvent({ keys, stimulusId: stimulusId("spilled-value-lost") }),
      );
    } finally {
      this.releasing = false;
    }
  }

  /** Add to `out` the dependents of `ts` a paused worker keeps as they are, once each. */
  private notStarted(ts: TaskState, out: string[]): void {
    for (const dep of ts.dependents) {
      if (!NOT_STARTED.has(dep.state) || this.rescheduled.has(dep.key)) continue;
      this.rescheduled.add(dep.key);
      out.push(dep.key);
    }
  }
}

/**
 * Whether a dependent of `ts` here, other than the task `except` and those of
 * `alsoExcept`, is in one of `states`.
 */
function neededHere(
  ts: TaskState,
  states: ReadonlySet<TaskStateState>,
  except: string | null,
  alsoExcept: ReadonlySet<string> | null,
): boolean {
  for (const dep of ts.dependents) {
    if (dep.key === except || alsoExcept?.has(dep.key)) continue;
    if (states.has(dep.state)) return true;
  }
  return false;
}
