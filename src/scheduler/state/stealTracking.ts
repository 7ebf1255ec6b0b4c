/**
 * What work stealing keeps track of between rounds (the state of Dask's
 * `WorkStealing` extension): which processing tasks could be stolen and how
 * cheaply (their level), and the occupancy and task counts that steals
 * awaiting the victim's answer will move. `workStealing.ts` decides what to
 * steal from it; `stealing.ts` carries the steals out.
 */

import { roundHalfEven } from "../../util/roundHalfEven.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Seconds added to every transfer's time (Dask's `LATENCY`, 100 ms since
 * dask/distributed#5390: a steal takes several network round trips, so small
 * tasks are kept from being stolen too eagerly).
 */
export const STEAL_LATENCY = 0.1;

/**
 * The cost multiplier of each level (Dask's `cost_multipliers`): level 0
 * holds tasks without inputs (nothing to move); level `l ≥ 1` tasks whose
 * transfer time is about `2^(l−6)` times their compute time. Balancing takes
 * the cheap levels first.
 */
export const COST_MULTIPLIERS: readonly number[] = Array.from({ length: 15 }, (_, level) =>
  level === 0 ? 1 : 1 + 2 ** (level - 6),
);

/** How much moving a task costs relative to computing it, and the level it is kept at. */
export interface StealTimeRatio {
  /** Transfer time of its inputs (plus latency) over its compute time; 0 without inputs. */
  readonly costMultiplier: number;
  /** Its index in {@link COST_MULTIPLIERS}. */
  readonly level: number;
}

/**
 * Seconds to fetch the inputs of `ts` that `ws` does not hold (Dask's
 * `get_comm_cost`).
 */
export function commCost(s: SchedulerState, ts: TaskState, ws: WorkerInfo): number {
  let bytes = 0;
  for (const dts of itemsOf(ts.dependencies)) if (!ws.hasWhat.has(dts)) bytes += s.getNbytes(dts);
  return bytes / s.options.bandwidth;
}

/**
 * Whether `ts` may be stolen and at which level (Dask's `steal_time_ratio`);
 * null if never. Never: an actor (weft keeps actors where placement spread
 * them, see `handleStealRequest`). (Dask also spares its `fast_tasks`: the
 * prefixes whose configured `default-task-durations` is 1 ms or less. weft
 * configures no default durations, so by Dask's rule none.) A task without inputs is
 * then filed at level 0, whatever its expected duration (nothing to move; as
 * in Dask, this comes before the duration is looked at). One with inputs is
 * never stolen if it is expected to take no time, or if moving its inputs
 * (plus {@link STEAL_LATENCY}) takes more than about `2^8.5` (≈362) times its
 * compute time: level 15 or more, past {@link COST_MULTIPLIERS}. The level
 * rounds as Python's `round` does, an exact half to the even level. Restricted
 * tasks are kept too (the thief is chosen among the workers that may run
 * them), but for those pinned to their worker (`putKeyInStealable`).
 */
export function stealTimeRatio(s: SchedulerState, ts: TaskState): StealTimeRatio | null {
  if (ts.actor) return null;
  if (ts.dependencies.size === 0) return NO_INPUTS;
  const compute = s.taskDuration(ts);
  if (!(compute > 0)) return null;
  let bytes = 0;
  for (const dts of itemsOf(ts.dependencies)) bytes += s.getNbytes(dts);
  const costMultiplier = (bytes / s.options.bandwidth + STEAL_LATENCY) / compute;
  // Python's round: a level exactly halfway (log2 = k + 0.5) goes to the even one.
  const level = Math.max(1, roundHalfEven(Math.log2(costMultiplier) + 6));
  if (level >= COST_MULTIPLIERS.length) return null;
  return { costMultiplier, level };
}

const NO_INPUTS: StealTimeRatio = Object.freeze({ costMultiplier: 0, level: 0 });

/**
 * Whether only `ws` may ever run `ts`: restricted, not loosely, to it alone by
 * its address or name (unique among the workers while it is connected; a host
 * may gain workers, so a name that is also the worker's host pins nothing).
 * No thief could take such a task, and kept stealable, every round of work
 * stealing walked each of them, looking for one: 8.4 ms a round (ten a
 * second) with 50,000 tasks pinned to a busy worker and another idle. Dask
 * 2023.7 keeps them, as every restricted task, and its `_can_steal` turns
 * each thief down in turn; weft files them nowhere, which changes no steal.
 */
function isPinnedTo(ts: TaskState, ws: WorkerInfo): boolean {
  const named = ts.workerRestrictions;
  if (named === null || named.loose) return false;
  for (const name of named.names) {
    // A worker named after its host (`--name $(hostname)`): the name also names every worker there.
    if (name !== ws.address && (name !== ws.name || name === ws.host)) return false;
  }
  return true;
}

/**
 * The work-stealing bookkeeping of one `SchedulerState` (`s.workStealing`).
 * The state machine keeps it up to date as tasks enter and leave `processing`
 * and as steals are requested and answered; only this package mutates it.
 */
export class WorkStealing {
  /** `{worker: [level → stealable tasks processing there]}` (Dask's `stealable`). */
  readonly stealable: Map<WorkerInfo, Set<TaskState>[]> = new Map();
  /** `{task: its level}` for every task in {@link stealable} (Dask's `key_stealable`). */
  readonly keyStealable: Map<TaskState, number> = new Map();
  /**
   * `{worker: seconds}` the steals in flight will add (thief) or take away
   * (victim) once confirmed (Dask's `in_flight_occupancy`).
   */
  readonly inFlightOccupancy: Map<WorkerInfo, number> = new Map();
  /** `{worker: tasks}` the steals in flight will add or take away (Dask's `in_flight_tasks`). */
  readonly inFlightTasks: Map<WorkerInfo, number> = new Map();
  /**
   * `{function: its processing tasks filed on a guessed duration}` (Dask's
   * `unknown_durations`, there by task prefix: weft measures durations by
   * function, see `SchedulerState.taskDuration`). Once a task of the function
   * reaches memory, they are filed again on its measured duration
   * ({@link durationMeasured}). A task leaving processing leaves its set (Dask
   * keeps it until then and skips it: the same filing, without holding
   * released tasks). Dask has kept them on its `WorkStealing` since
   * dask/distributed#7075 (2022-09) and changed this filing in #9000
   * (2025-02); the 2023 `stealing.py` followed here is taken to be
   * 2023.7.0's, which could not be pinned down line by line.
   */
  readonly unknownDurations: Map<string, Set<TaskState>> = new Map();
  /** Steals requested of victims so far (by balancing or a `steal-request` stimulus). */
  requested = 0;
  /** Steals the victims confirmed, which moved the task to the thief. */
  confirmed = 0;

  /** Seconds of work on `ws`, counting the steals in flight as done (Dask's `_combined_occupancy`). */
  combinedOccupancy(ws: WorkerInfo): number {
    return ws.occupancy + (this.inFlightOccupancy.get(ws) ?? 0);
  }

  /**
   * Tasks on `ws` that occupy a thread, counting the steals in flight as done
   * (Dask's `_combined_nprocessing`, less the seceded tasks, which hold no
   * thread: weft's `idle` does not count them either).
   */
  combinedNprocessing(ws: WorkerInfo): number {
    return ws.processing.size - ws.longRunning.size + (this.inFlightTasks.get(ws) ?? 0);
  }

  /** Note `ts`, just assigned to its worker, as stealable if it may be (Dask's `put_key_in_stealable`). */
  putKeyInStealable(s: SchedulerState, ts: TaskState): void {
    const ws = ts.processingOn;
    if (ws === null || isPinnedTo(ts, ws)) return;
    const ratio = stealTimeRatio(s, ts);
    if (ratio === null) return;
    let levels = this.stealable.get(ws);
    if (levels === undefined) {
      levels = COST_MULTIPLIERS.map(() => new Set<TaskState>());
      this.stealable.set(ws, levels);
    }
    levels[ratio.level].add(ts);
    this.keyStealable.set(ts, ratio.level);
    // As Dask: only a task that was filed (the ratio may have ruled it out on
    // its guessed duration, and then it stays out) is kept to be filed again.
    const fn = ts.runSpec?.fn;
    if (fn === undefined || s.durations.has(fn)) return;
    let guessed = this.unknownDurations.get(fn);
    if (guessed === undefined) {
      guessed = new Set();
      this.unknownDurations.set(fn, guessed);
    }
    guessed.add(ts);
  }

  /**
   * A task of `fn` reached memory (Dask's `transition` hook, `processing →
   * memory`): the tasks of `fn` filed on a guessed duration are filed again,
   * on the duration now measured (Dask's `recalculate_cost`), unless a steal
   * of them is in flight (then they stay out, as in Dask) or they have
   * seceded (weft never keeps those stealable; Dask would file them again,
   * to be refused by their worker).
   */
  durationMeasured(s: SchedulerState, fn: string): void {
    const guessed = this.unknownDurations.get(fn);
    if (guessed === undefined) return;
    this.unknownDurations.delete(fn);
    for (const ts of guessed) {
      const ws = ts.processingOn;
      if (ws === null || s.steals.has(ts) || ws.longRunning.has(ts)) continue;
      this.removeKeyFromStealable(ts);
      this.putKeyInStealable(s, ts);
    }
  }

  /** `ts` left processing: it is no longer to be filed again (see {@link unknownDurations}). */
  leftProcessing(ts: TaskState): void {
    this.removeKeyFromStealable(ts);
    const fn = ts.runSpec?.fn;
    if (fn === undefined) return;
    const guessed = this.unknownDurations.get(fn);
    if (guessed?.delete(ts) === true && guessed.size === 0) this.unknownDurations.delete(fn);
  }

  /** `ts` may no longer be stolen from its worker (Dask's `remove_key_from_stealable`). */
  removeKeyFromStealable(ts: TaskState): void {
    const level = this.keyStealable.get(ts);
    if (level === undefined) return;
    this.keyStealable.delete(ts);
    const ws = ts.processingOn;
    if (ws !== null) this.stealable.get(ws)?.[level].delete(ts);
  }

  /** Count a steal just requested in the in-flight totals of its victim and thief. */
  addInFlight(victim: WorkerInfo, thief: WorkerInfo, victimSeconds: number, thiefSeconds: number) {
    this.requested++;
    adjust(this.inFlightOccupancy, victim, -victimSeconds);
    adjust(this.inFlightOccupancy, thief, thiefSeconds);
    adjust(this.inFlightTasks, victim, -1);
    adjust(this.inFlightTasks, thief, 1);
  }

  /**
   * Take the steal of `ts` out of the steals in flight, answered or dropped,
   * and out of the in-flight totals (Dask's `_remove_from_in_flight`).
   */
  removeInFlight(s: SchedulerState, ts: TaskState): void {
    const steal = s.steals.get(ts);
    if (steal === undefined) return;
    s.steals.delete(ts);
    if (s.steals.size === 0) {
      // Nothing in flight: start again from exact zeros (no rounding left over).
      this.inFlightOccupancy.clear();
      this.inFlightTasks.clear();
      return;
    }
    // A worker removed meanwhile has no totals left to correct (see `forgetWorker`).
    const { victim, thief } = steal;
    if (this.inFlightTasks.has(victim)) {
      adjust(this.inFlightOccupancy, victim, steal.victimDuration);
      adjust(this.inFlightTasks, victim, 1);
    }
    if (this.inFlightTasks.has(thief)) {
      adjust(this.inFlightOccupancy, thief, -steal.thiefDuration);
      adjust(this.inFlightTasks, thief, -1);
    }
  }

  /**
   * `ws` left the cluster: forget its levels and in-flight totals. Its own
   * processing tasks have left processing (their steals with them); steals it
   * was to be the thief of stay in flight until the victim answers.
   */
  forgetWorker(ws: WorkerInfo): void {
    this.stealable.delete(ws);
    this.inFlightOccupancy.delete(ws);
    this.inFlightTasks.delete(ws);
  }
}

function adjust(totals: Map<WorkerInfo, number>, ws: WorkerInfo, by: number): void {
  totals.set(ws, (totals.get(ws) ?? 0) + by);
}
