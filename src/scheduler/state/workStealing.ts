/**
 * The work-stealing policy: one round of Dask's `WorkStealing.balance`
 * (Dask 2023.7), run by the `balance` stimulus, which the shell fires every
 * `workStealingIntervalMs` (100 ms by default, as Dask).
 *
 * - Thieves: the idle workers (`s.idle`: running, fewer tasks executing than
 *   threads), whatever their steals in flight (as Dask). No round when none
 *   is idle or all are.
 * - Victims: the saturated workers (Dask's `check_idle_saturated` test, on the
 *   occupancy and tasks counting the steals in flight), else those of the ten
 *   busiest with more than 0.2 s of work and more tasks than threads; busiest
 *   first.
 * - Tasks: those kept stealable as they entered processing
 *   (`stealTracking.ts`), cheapest level first; on each level a victim's
 *   newest first (the ones it would run last).
 * - For each, the thief is the one the placement objective prefers among the
 *   thieves that may run it and whose memory limit takes its inputs, their
 *   occupancy counting the steals in flight (`getThief`, Dask's
 *   `stealing_objective`); the steal is requested if the thief
 *   would start it sooner than the victim would — `occ(thief) + comm(thief) +
 *   compute ≤ occ(victim) − (comm(victim) + compute) / 2`.
 * - A thief leaves the round once it is no longer unoccupied; a victim once
 *   it has no more tasks than threads left.
 */

import { fitsMemoryLimit, inputsNbytes } from "./bookkeeping.ts";
import { bestByObjective, isNamedWorker, satisfiesRestrictions } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { mayBeStolen, requestSteal } from "./stealing.ts";
import { COST_MULTIPLIERS, commCost, type WorkStealing } from "./stealTracking.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** At most this many of the busiest workers are victims when none is saturated (Dask's `topk(10, …)`). */
const BUSIEST_VICTIMS = 10;
/** Seconds of work below which a worker is never a victim unless saturated (Dask's 0.2). */
const MIN_VICTIM_OCCUPANCY = 0.2;

/**
 * True if a round of work stealing may do something: some worker is idle and
 * some is not. The shells (the server, the simulator) check it too, so that
 * rounds with nothing to do leave no record in the stimulus log.
 */
export function mayBalance(s: SchedulerState): boolean {
  const idle = s.idle.size;
  return idle !== 0 && idle !== s.workers.size;
}

/**
 * One round of work stealing: send `steal-request`s moving queued tasks from
 * busy workers to idle ones (see the module comment). Returns at once when no
 * worker is idle or every worker is. Returns how many steals it asked for.
 */
export function balance(s: SchedulerState): number {
  if (!mayBalance(s)) return 0;
  const idle = s.idle;
  const tracking = s.workStealing;
  const average = averageOccupancy(s);
  // Every idle worker, as Dask's `set(s.idle.values())`, even one its steals
  // in flight already make occupied: it leaves the round once asked a steal for.
  const thieves = new Thieves(tracking, idle);
  const victims = potentialVictims(s, thieves, average);
  let requested = 0;
  for (let level = 0; level < COST_MULTIPLIERS.length && thieves.size > 0; level++) {
    for (const victim of victims) {
      if (thieves.size === 0) break;
      const stealable = tracking.stealable.get(victim)?.[level];
      if (stealable === undefined || stealable.size === 0) continue;
      // Newest first: the tasks the victim would come to last. (Dask takes its set's order.)
      const newestFirst = [...stealable].reverse();
      for (const ts of newestFirst) {
        if (thieves.size === 0 || !hasBacklog(tracking, victim)) break;
        if (ts.processingOn !== victim || !mayBeStolen(s, ts)) {
          tracking.removeKeyFromStealable(ts);
          continue;
        }
        const thief = getThief(s, ts, thieves);
        if (thief === null) continue;
        if (!worthMoving(s, ts, victim, thief)) continue;
        requestSteal(s, ts, victim, thief);
        requested++;
        if (!isUnoccupied(tracking, thief, average)) thieves.delete(thief);
      }
    }
  }
  return requested;
}

/** Seconds of work per thread over the whole cluster (Dask's `total_occupancy / total_nthreads`). */
function averageOccupancy(s: SchedulerState): number {
  if (s.totalNthreads === 0) return 0;
  let total = 0;
  for (const ws of s.workers.values()) total += ws.occupancy;
  return total / s.totalNthreads;
}

/**
 * A worker that can take more work (Dask's `is_unoccupied`): fewer tasks than
 * threads, or less than half the cluster's average work per thread, counting
 * the steals in flight.
 */
function isUnoccupied(tracking: WorkStealing, ws: WorkerInfo, average: number): boolean {
  return (
    tracking.combinedNprocessing(ws) < ws.nthreads ||
    tracking.combinedOccupancy(ws) < (ws.nthreads * average) / 2
  );
}

/** More tasks than threads on `ws`, counting the steals in flight: some are queued, not running. */
function hasBacklog(tracking: WorkStealing, ws: WorkerInfo): boolean {
  return tracking.combinedNprocessing(ws) > ws.nthreads;
}

/**
 * Dask's saturation test (`check_idle_saturated`): the work queued beyond one
 * task per thread, spread over the threads, is over 0.4 s and over 1.9 times
 * the cluster's average work per thread.
 */
function isSaturated(tracking: WorkStealing, ws: WorkerInfo, average: number): boolean {
  const nprocessing = tracking.combinedNprocessing(ws);
  if (nprocessing <= ws.nthreads) return false;
  const occupancy = tracking.combinedOccupancy(ws);
  const pending = (occupancy * (nprocessing - ws.nthreads)) / (nprocessing * ws.nthreads);
  return pending > 0.4 && pending > 1.9 * average;
}

/**
 * The workers to steal from, busiest first: the saturated ones, else those
 * of the {@link BUSIEST_VICTIMS} busiest (Dask's `topk`) with a backlog and
 * over {@link MIN_VICTIM_OCCUPANCY} seconds of work that are not thieves.
 * Paused workers too: their queued tasks are better run elsewhere.
 */
function potentialVictims(s: SchedulerState, thieves: Thieves, average: number): WorkerInfo[] {
  const tracking = s.workStealing;
  const byOccupancy = (a: WorkerInfo, b: WorkerInfo) =>
    tracking.combinedOccupancy(b) - tracking.combinedOccupancy(a) || a.index - b.index;
  const saturated: WorkerInfo[] = [];
  for (const ws of s.workers.values()) {
    if (!thieves.has(ws) && isSaturated(tracking, ws, average)) saturated.push(ws);
  }
  if (saturated.length > 0) return saturated.sort(byOccupancy);
  // As Dask: the ten busiest first, and only then those of them that qualify.
  // (A walk keeping the ten in order, not a sort of every worker.)
  const busiest: WorkerInfo[] = [];
  for (const ws of s.workers.values()) {
    if (busiest.length === BUSIEST_VICTIMS && byOccupancy(ws, busiest[BUSIEST_VICTIMS - 1]) >= 0) {
      continue;
    }
    let at = busiest.length;
    while (at > 0 && byOccupancy(ws, busiest[at - 1]) < 0) at--;
    busiest.splice(at, 0, ws);
    if (busiest.length > BUSIEST_VICTIMS) busiest.pop();
  }
  return busiest.filter(
    (ws) =>
      tracking.combinedOccupancy(ws) > MIN_VICTIM_OCCUPANCY &&
      hasBacklog(tracking, ws) &&
      !thieves.has(ws),
  );
}

/**
 * The thief for `ts` (Dask's `_get_thief`): among the thieves that may run it
 * (those it names that supply its resources; for loose worker restrictions,
 * if none of them is a thief, any thief supplying its resources), the one the
 * placement objective prefers, on their occupancy counting the steals in
 * flight (Dask's `stealing_objective`: a round spreads its steals over equally
 * idle thieves); null if none may run it. A thief whose
 * `memoryLimit` the task's inputs exceed may not: `addToProcessing` would fail
 * the task there (`fitsMemoryLimit`, the predicate of that check).
 *
 * The candidates come from the restriction, not from walking the workers
 * (Dask's `valid_workers` is as cheap): the thieves it names are looked up by
 * name, those supplying its resources in the thieves declaring one of them.
 * Which thief is chosen does not depend on their order: the objective breaks
 * every tie (down to registration order).
 */
export function getThief(s: SchedulerState, ts: TaskState, thieves: Thieves): WorkerInfo | null {
  const bytes = ts.dependencies.size === 0 ? 0 : inputsNbytes(ts);
  const named = ts.workerRestrictions;
  const resources = ts.resourceRestrictions;
  if (named === null && resources === null && thieves.allFit(bytes)) {
    return bestByObjective(s, ts, thieves.workers, thieves.occupancyOf);
  }
  const out = candidates;
  out.length = 0;
  if (named !== null) thieves.named(s, named.names, resources, bytes, out);
  if (out.length === 0 && (named === null || named.loose)) thieves.supplying(resources, bytes, out);
  const thief = out.length === 0 ? null : bestByObjective(s, ts, out, thieves.occupancyOf);
  out.length = 0;
  return thief;
}

/** Scratch for {@link getThief}'s candidates. */
const candidates: WorkerInfo[] = [];
const NO_WORKERS: readonly WorkerInfo[] = [];

/** True if `ws` supplies `resources` (null: none needed) and its memory limit takes `bytes` of inputs. */
function mayTake(
  ws: WorkerInfo,
  resources: Readonly<Record<string, number>> | null,
  bytes: number,
): boolean {
  return (resources === null || satisfiesRestrictions(ws, resources)) && fitsMemoryLimit(ws, bytes);
}

/**
 * The thieves of one balancing round, with two indexes built on first need,
 * so that a restricted task finds the thieves that may run it without a walk
 * over all of them: by address, host and name (for worker restrictions) and
 * by resource declared. A thief that leaves the round stays in the indexes
 * (lookups check membership).
 */
export class Thieves {
  private readonly members = new Set<WorkerInfo>();
  /**
   * The seconds of work of a thief counting the steals in flight (Dask's
   * `_combined_occupancy`), as the thief is chosen on.
   */
  readonly occupancyOf: (ws: WorkerInfo) => number;
  private byIdentifier: Map<string, WorkerInfo[]> | null = null;
  private byResource: Map<string, WorkerInfo[]> | null = null;
  /** The smallest `memoryLimit` of the thieves added (leaving ones included). */
  private smallestLimit = Number.POSITIVE_INFINITY;

  constructor(tracking: WorkStealing, workers: Iterable<WorkerInfo> = []) {
    this.occupancyOf = (ws) => tracking.combinedOccupancy(ws);
    for (const ws of workers) this.add(ws);
  }

  get size(): number {
    return this.members.size;
  }

  /** The thieves. */
  get workers(): ReadonlySet<WorkerInfo> {
    return this.members;
  }

  add(ws: WorkerInfo): void {
    this.members.add(ws);
    const limit = ws.memoryLimit;
    if (limit !== null && limit > 0 && limit < this.smallestLimit) this.smallestLimit = limit;
    this.byIdentifier = null;
    this.byResource = null;
  }

  has(ws: WorkerInfo): boolean {
    return this.members.has(ws);
  }

  delete(ws: WorkerInfo): void {
    this.members.delete(ws);
  }

  /** True if every thief's memory limit surely takes `bytes` of inputs (see `fitsMemoryLimit`). */
  allFit(bytes: number): boolean {
    return bytes <= this.smallestLimit;
  }

  /**
   * Append to `out` the thieves `names` names (by address, host or name, as
   * `isNamedWorker`) that supply `resources` and whose memory limit takes
   * `bytes`, each once.
   */
  named(
    s: SchedulerState,
    names: ReadonlySet<string>,
    resources: Readonly<Record<string, number>> | null,
    bytes: number,
    out: WorkerInfo[],
  ): void {
    if (names.size >= this.members.size) {
      for (const ws of this.members) {
        if (isNamedWorker(ws, names) && mayTake(ws, resources, bytes)) out.push(ws);
      }
      return;
    }
    const index = this.identifierIndex();
    // A worker may be named twice (by address and by host): stamp those taken.
    const epoch = ++s.validEpoch;
    for (const name of names) {
      for (const ws of index.get(name) ?? NO_WORKERS) {
        if (ws.validEpoch === epoch || !this.members.has(ws)) continue;
        ws.validEpoch = epoch;
        if (mayTake(ws, resources, bytes)) out.push(ws);
      }
    }
  }

  /**
   * Append to `out` the thieves that supply `resources` (every thief when
   * null) and whose memory limit takes `bytes`.
   */
  supplying(
    resources: Readonly<Record<string, number>> | null,
    bytes: number,
    out: WorkerInfo[],
  ): void {
    let pool: Iterable<WorkerInfo> = this.members;
    if (resources !== null) {
      // Only the thieves declaring a resource may supply it: walk the fewest.
      const index = this.resourceIndex();
      let fewest: readonly WorkerInfo[] | null = null;
      for (const name in resources) {
        const declaring = index.get(name) ?? NO_WORKERS;
        if (fewest === null || declaring.length < fewest.length) fewest = declaring;
      }
      if (fewest !== null) pool = fewest;
    }
    for (const ws of pool) {
      if (this.members.has(ws) && mayTake(ws, resources, bytes)) out.push(ws);
    }
  }

  private identifierIndex(): Map<string, WorkerInfo[]> {
    if (this.byIdentifier !== null) return this.byIdentifier;
    const index = new Map<string, WorkerInfo[]>();
    for (const ws of this.members) {
      addTo(index, ws.address, ws);
      const host = ws.host;
      if (host !== null && host !== ws.address) addTo(index, host, ws);
      const name = ws.name;
      if (name !== null && name !== ws.address && name !== host) addTo(index, name, ws);
    }
    this.byIdentifier = index;
    return index;
  }

  private resourceIndex(): Map<string, WorkerInfo[]> {
    if (this.byResource !== null) return this.byResource;
    const index = new Map<string, WorkerInfo[]>();
    for (const ws of this.members) for (const name in ws.resources) addTo(index, name, ws);
    this.byResource = index;
    return index;
  }
}

function addTo(index: Map<string, WorkerInfo[]>, key: string, ws: WorkerInfo): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [ws]);
  else list.push(ws);
}

/**
 * Dask's move condition: the thief, with its work, the fetching of the
 * task's inputs and the task, would still be done before the victim gets
 * through half of the task and its own fetching, counting steals in flight.
 */
function worthMoving(
  s: SchedulerState,
  ts: TaskState,
  victim: WorkerInfo,
  thief: WorkerInfo,
): boolean {
  const tracking = s.workStealing;
  const compute = s.taskDuration(ts);
  const thiefCost = tracking.combinedOccupancy(thief) + commCost(s, ts, thief) + compute;
  const victimCost = tracking.combinedOccupancy(victim) - (commCost(s, ts, victim) + compute) / 2;
  return thiefCost <= victimCost;
}
