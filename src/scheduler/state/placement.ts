/**
 * Which worker runs a task (Dask's `decide_worker*` and `worker_objective`).
 *
 * - Restrictions first: a task with resource restrictions may only go to a
 *   running worker supplying at least the amount of each resource it needs.
 * - Root-ish tasks ({@link isRootish}, Dask's `is_rootish`: no restrictions,
 *   not an actor, a group larger than twice the cluster's threads whose tasks
 *   depend on fewer than 5 groups of fewer than 5 tasks in all, so with or
 *   without inputs) with queuing on go to the worker with free slots that has
 *   the fewest tasks per thread, wherever their inputs are, or wait in
 *   `queued` when every worker is saturated. Other tasks are never queued.
 * - Other tasks go to the candidate that can start them soonest: expected
 *   backlog per thread (`occupancy / nthreads`) plus the time to fetch the
 *   inputs it lacks (`missing bytes / bandwidth`). Candidates are the workers
 *   holding any of the task's inputs, plus idle workers (fewer tasks than
 *   threads), so data locality wins unless a holder is busy and a peer free.
 *   Ties go to fewer tasks per thread, then less data held, then the worker
 *   that registered first.
 * - Actors (Dask's `decide_worker` and `worker_objective` for `actor=True`):
 *   every running worker that may run one is a candidate, holding its inputs
 *   or not, and the fewest actors (processing or living there) comes before
 *   the objective above, so that actors spread over the workers. They take
 *   none of the root-task paths, queued or round-robin.
 * - Root-ish tasks with queuing off go in runs of consecutive tasks to one
 *   worker (Dask's co-assignment: a run is the group's share for that
 *   worker's threads), wherever their inputs are, so that siblings a later
 *   task combines are computed together. Other tasks without inputs or
 *   restrictions go to the least occupied worker, round-robin among those
 *   with nothing to do.
 *
 * No allocation on these paths: per-worker scratch fields, stamped with a
 * pass counter, hold the bytes of inputs each worker has.
 */

import { namesWorker } from "../../util/address.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Whether `ts` is of a kind queuing can hold: no restrictions and no actor (the
 * part of {@link isRootish} that never changes while the task waits).
 */
export function mayBeQueued(ts: TaskState): boolean {
  return ts.resourceRestrictions === null && ts.workerRestrictions === null && !ts.actor;
}

/**
 * True iff `ts` is root-ish (Dask's `is_rootish`): it has no restrictions, is
 * not an actor, and its group is larger than twice the cluster's threads with
 * fewer than 5 dependency groups holding fewer than 5 tasks between them (a
 * large group of tasks without inputs, or sharing a few small ones, such as
 * 100 `load-*` tasks each reading one `cfg`). Such tasks are queued with
 * queuing on, and co-assigned with queuing off. A dependency group's tasks are
 * those it has now (its `size`; Dask also counts those forgotten while the
 * group lives); a dropped group (all its tasks forgotten) counts for nothing.
 * Whether a task is root-ish changes as its group grows or shrinks and as
 * workers come and go: a task queued while it was stays queued.
 */
export function isRootish(s: SchedulerState, ts: TaskState): boolean {
  if (!mayBeQueued(ts)) return false;
  const tg = ts.group;
  if (!(tg.size > 2 * s.totalNthreads)) return false;
  let groups = 0;
  let tasks = 0;
  for (const dg of tg.dependencies) {
    if (!dg.isLive) continue; // dropped: see TaskGroup.dependencies
    // Every live group holds a task: 5 groups are 5 tasks (Dask's two tests kept).
    groups += 1;
    tasks += dg.size;
    if (groups >= 5 || tasks >= 5) return false;
  }
  return true;
}

/**
 * Tasks that can be sent to `ws` without oversaturating it (Dask's
 * `_task_slots_available`): `max(ceil(saturation × nthreads), 1)` minus the
 * tasks it is processing that have not seceded.
 */
export function taskSlotsAvailable(ws: WorkerInfo, saturation: number): number {
  return (
    Math.max(Math.ceil(saturation * ws.nthreads), 1) - (ws.processing.size - ws.longRunning.size)
  );
}

/**
 * True iff `ws` declares every resource named and supplies at least
 * `restrictions[name]` of it. A worker that does not declare a resource is
 * never valid for it, even for an amount of 0 (as in Dask's `valid_workers`):
 * its state machine has no counter for that resource to acquire from.
 */
export function satisfiesRestrictions(
  ws: WorkerInfo,
  restrictions: Readonly<Record<string, number>>,
): boolean {
  for (const name in restrictions) {
    const supplied = ws.resources[name];
    if (supplied === undefined || supplied < restrictions[name]) return false;
  }
  return true;
}

/** True iff `ws` is one of the workers `allowed` names, by address or by host. */
export function isNamedWorker(ws: WorkerInfo, allowed: ReadonlySet<string>): boolean {
  return namesWorker(allowed, ws.address, ws.host, ws.name);
}

/**
 * The connected workers `names` names (addresses, hosts or names), in registration
 * order, and the names that match none of them (for a request's `failed`:
 * "no connected worker matches it").
 */
export function namedWorkers(
  s: SchedulerState,
  names: ReadonlySet<string>,
): { workers: WorkerInfo[]; unmatched: string[] } {
  const workers: WorkerInfo[] = [];
  const matched = new Set<string>();
  for (const ws of s.workers.values()) {
    if (!isNamedWorker(ws, names)) continue;
    workers.push(ws);
    matched.add(ws.address);
    if (ws.host !== null) matched.add(ws.host);
    if (ws.name !== null) matched.add(ws.name);
  }
  return { workers, unmatched: [...names].filter((name) => !matched.has(name)) };
}

/**
 * True iff `ws` may run `ts`: it supplies the task's resources and, unless the
 * task's worker restrictions are loose, is one of the workers it names. (A loose
 * task prefers the workers it names: {@link validWorkers} says which.)
 */
export function mayRunOn(ws: WorkerInfo, ts: TaskState): boolean {
  const r = ts.resourceRestrictions;
  if (r !== null && !satisfiesRestrictions(ws, r)) return false;
  const named = ts.workerRestrictions;
  return named === null || named.loose || isNamedWorker(ws, named.names);
}

/**
 * The running workers `ts` may run on, or null when it has no restrictions
 * (every running worker may). A task with loose worker restrictions may run on
 * the workers it names, or on any worker if none of them can (Dask's
 * `valid_workers` with `loose_restrictions`). The array is scratch, valid
 * until the next call; each listed worker gets `validEpoch === s.validEpoch`.
 */
export function validWorkers(s: SchedulerState, ts: TaskState): WorkerInfo[] | null {
  const resources = ts.resourceRestrictions;
  const named = ts.workerRestrictions;
  if (resources === null && named === null) return null;
  const out = runningWorkersWith(s, resources, named?.names ?? null);
  if (out.length > 0 || named === null || !named.loose) return out;
  return resources === null ? null : runningWorkersWith(s, resources, null);
}

/**
 * The running workers supplying `resources` and named in `names` (either null:
 * no condition), in `s.scratchWorkers`, each stamped with a new `validEpoch`.
 */
function runningWorkersWith(
  s: SchedulerState,
  resources: Readonly<Record<string, number>> | null,
  names: ReadonlySet<string> | null,
): WorkerInfo[] {
  const epoch = ++s.validEpoch;
  const out = s.scratchWorkers;
  out.length = 0;
  for (const ws of s.running) {
    if (
      (resources === null || satisfiesRestrictions(ws, resources)) &&
      (names === null || isNamedWorker(ws, names))
    ) {
      ws.validEpoch = epoch;
      out.push(ws);
    }
  }
  return out;
}

/** A root-ish task's worker with queuing on: the one with free slots and fewest tasks per thread. */
export function decideWorkerRootishQueuingEnabled(s: SchedulerState): WorkerInfo | null {
  let best: WorkerInfo | null = null;
  let bestLoad = Number.POSITIVE_INFINITY;
  for (const ws of s.idleTaskCount) {
    const load = ws.processing.size / ws.nthreads;
    if (load < bestLoad) {
      best = ws;
      bestLoad = load;
    }
  }
  return best;
}

/**
 * Stamp on each worker holding inputs of `ts` how many bytes of them it holds
 * (`scratchBytes`, valid while `scratchEpoch === s.placementEpoch`) and return
 * the total size of the inputs.
 */
function markHeldBytes(s: SchedulerState, ts: TaskState): number {
  const epoch = ++s.placementEpoch;
  let total = 0;
  for (const dts of itemsOf(ts.dependencies)) {
    const nbytes = s.getNbytes(dts);
    total += nbytes;
    for (const ws of dts.whoHas) {
      if (ws.scratchEpoch !== epoch) {
        ws.scratchEpoch = epoch;
        ws.scratchBytes = 0;
      }
      ws.scratchBytes += nbytes;
    }
  }
  return total;
}

/**
 * Keeps the best worker seen so far by the objective: for an actor, the
 * fewest actors first (Dask's `worker_objective` returns `(len(ws.actors),
 * start_time, ws.nbytes)` for one); then expected start time, then tasks per
 * thread, then bytes held, then registration order.
 */
class Best {
  ws: WorkerInfo | null = null;
  private actors = 0;
  private cost = 0;
  private load = 0;

  reset(): void {
    this.ws = null;
  }

  /**
   * Weigh `ws` for a task whose inputs total `totalBytes`; `actor`: the task
   * is an actor; `occupancy`: the seconds of work `ws` counts as having.
   */
  consider(
    s: SchedulerState,
    ws: WorkerInfo,
    totalBytes: number,
    actor: boolean,
    occupancy = ws.occupancy,
  ): void {
    // 0 for every worker when the task is no actor: the count then decides nothing.
    const actors = actor ? ws.actors.size : 0;
    const held = ws.scratchEpoch === s.placementEpoch ? ws.scratchBytes : 0;
    const cost = occupancy / ws.nthreads + (totalBytes - held) / s.options.bandwidth;
    const load = ws.processing.size / ws.nthreads;
    const best = this.ws;
    if (
      best === null ||
      actors < this.actors ||
      (actors === this.actors &&
        (cost < this.cost ||
          (cost === this.cost &&
            (load < this.load ||
              (load === this.load &&
                (ws.nbytes < best.nbytes ||
                  (ws.nbytes === best.nbytes && ws.index < best.index)))))))
    ) {
      this.ws = ws;
      this.actors = actors;
      this.cost = cost;
      this.load = load;
    }
  }
}

const best = new Best();

function isCandidate(s: SchedulerState, ws: WorkerInfo, valid: WorkerInfo[] | null): boolean {
  return ws.status === "running" && (valid === null || ws.validEpoch === s.validEpoch);
}

/**
 * The worker for a task that is not queued: see the module comment. Null when
 * no running worker may run it (then it goes to `no-worker`). `exclude` (a
 * steal's victim) is never chosen.
 */
export function decideWorkerNonRootish(
  s: SchedulerState,
  ts: TaskState,
  exclude: WorkerInfo | null = null,
): WorkerInfo | null {
  if (s.running.size === 0) return null;
  const valid = validWorkers(s, ts);
  if (valid !== null && valid.length === 0) return null;
  const actor = ts.actor;
  if (valid === null && exclude === null && !actor) {
    // Root-ish tasks with queuing on are queued instead (see waiting → processing);
    // one reaching here (leaving no-worker) is placed as any other.
    if (!Number.isFinite(s.options.workerSaturation) && isRootish(s, ts)) {
      return decideWorkerRootishQueuingDisabled(s, ts);
    }
    if (ts.dependencies.size === 0) return roundRobinLeastOccupied(s);
  }
  const total = markHeldBytes(s, ts);
  best.reset();
  if (actor) {
    // Every worker that may run it, as Dask's `decide_worker` for an actor: the
    // holders of its inputs would otherwise gather every actor that needs them.
    for (const ws of valid ?? s.running) {
      if (ws !== exclude) best.consider(s, ws, total, true);
    }
  } else {
    for (const dts of itemsOf(ts.dependencies)) {
      for (const ws of dts.whoHas) {
        if (ws !== exclude && isCandidate(s, ws, valid)) best.consider(s, ws, total, false);
      }
    }
    for (const ws of s.idle) {
      if (ws !== exclude && isCandidate(s, ws, valid)) best.consider(s, ws, total, false);
    }
    if (best.ws === null) {
      // Nobody holding inputs or idle may run it: any worker that may.
      for (const ws of valid ?? s.running) {
        if (ws !== exclude) best.consider(s, ws, total, false);
      }
    }
  }
  const chosen = best.ws;
  best.reset();
  return chosen;
}

/**
 * The worker among `candidates` that the objective prefers for `ts` (Dask's
 * `min(candidates, key=worker_objective)`), or null if there are none.
 * `occupancyOf` gives the seconds of work each counts as having (work
 * stealing counts the steals in flight, as Dask's `stealing_objective`);
 * by default its `occupancy`.
 */
export function bestByObjective(
  s: SchedulerState,
  ts: TaskState,
  candidates: Iterable<WorkerInfo>,
  occupancyOf?: (ws: WorkerInfo) => number,
): WorkerInfo | null {
  const total = markHeldBytes(s, ts);
  best.reset();
  for (const ws of candidates) {
    best.consider(s, ws, total, ts.actor, occupancyOf?.(ws) ?? ws.occupancy);
  }
  const chosen = best.ws;
  best.reset();
  return chosen;
}

/**
 * A root-ish task's worker with queuing off (Dask's
 * `decide_worker_rootish_queuing_disabled`): the group's last worker while its
 * run lasts, else the idle (or any running) worker with the least occupancy per
 * thread, then the least data, which then takes the next
 * `floor(group size / total threads × its threads)` tasks of the group. Placing
 * a batch in priority order thus gives each worker a contiguous share. A run
 * ends with the stimulus that placed it (Dask ends it when the group's last
 * released or waiting task is placed, which is the end of the batch): the
 * next batch of the group starts afresh on the least busy worker.
 */
function decideWorkerRootishQueuingDisabled(s: SchedulerState, ts: TaskState): WorkerInfo | null {
  const tg = ts.group;
  const last = tg.lastWorker;
  let ws: WorkerInfo | null = null;
  // lastWorker is null once its run is used up (below).
  if (
    last !== null &&
    tg.lastWorkerStimulus === s.stimulusCount &&
    last.status === "running" &&
    s.workers.get(last.address) === last
  ) {
    ws = last;
  } else {
    let bestStart = 0;
    for (const candidate of s.idle.size > 0 ? s.idle : s.running) {
      const start = candidate.occupancy / candidate.nthreads;
      if (
        ws === null ||
        start < bestStart ||
        (start === bestStart && candidate.nbytes < ws.nbytes)
      ) {
        ws = candidate;
        bestStart = start;
      }
    }
    if (ws === null) return null;
    tg.lastWorkerTasksLeft = Math.floor((tg.size / s.totalNthreads) * ws.nthreads);
    tg.lastWorkerStimulus = s.stimulusCount;
  }
  tg.lastWorkerTasksLeft -= 1;
  // A finished run keeps no worker alive.
  tg.lastWorker = tg.lastWorkerTasksLeft > 0 ? ws : null;
  return ws;
}

/**
 * For tasks without inputs or restrictions that are not co-assigned (not
 * root-ish, or leaving no-worker with queuing on): the least occupied idle
 * worker (any running one if none is idle), round-robin among those with zero
 * occupancy (Dask's fast path).
 */
function roundRobinLeastOccupied(s: SchedulerState): WorkerInfo | null {
  const pool = s.idle.size > 0 ? s.idle : s.running;
  let min: WorkerInfo | null = null;
  let zeros = 0;
  for (const ws of pool) {
    if (min === null || ws.occupancy < min.occupancy) min = ws;
    if (ws.occupancy === 0) zeros++;
  }
  if (zeros <= 1) return min;
  let nth = s.nTasks % zeros;
  for (const ws of pool) {
    if (ws.occupancy === 0 && nth-- === 0) return ws;
  }
  return min;
}

function formatAmount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, "");
}

/**
 * Why no running worker may run `ts`, in words for the client: no workers at
 * all, all paused, or the first resource no running worker has enough of.
 */
export function noWorkerReason(s: SchedulerState, ts: TaskState): string {
  if (s.workers.size === 0) return "no workers are connected";
  if (s.running.size === 0) {
    return `no running workers (all ${s.workers.size} connected workers are paused)`;
  }
  const named = ts.workerRestrictions;
  if (named !== null && !named.loose) {
    if (runningWorkersWith(s, null, named.names).length === 0) {
      const list = [...named.names].slice(0, 5).join(", ");
      const more = named.names.size > 5 ? ", …" : "";
      let paused = 0;
      for (const ws of s.workers.values()) {
        if (ws.status === "paused" && isNamedWorker(ws, named.names)) paused++;
      }
      const why = paused === 0 ? "" : `; ${paused === 1 ? "one is" : `${paused} are`} paused`;
      return `none of the workers it is restricted to is running (workers=[${list}${more}]${why})`;
    }
  }
  const restrictions = ts.resourceRestrictions;
  if (restrictions === null) return "no running worker can run it";
  for (const name in restrictions) {
    const needed = restrictions[name];
    let most = 0;
    let provided = false;
    for (const ws of s.running) {
      const has = ws.resources[name];
      if (has !== undefined) {
        provided = true;
        if (has > most) most = has;
      }
    }
    if (!provided) {
      return `no running worker provides resource '${name}' (the task needs ${formatAmount(needed)})`;
    }
    if (most < needed) {
      return (
        `no running worker has enough of resource '${name}': the task needs ` +
        `${formatAmount(needed)}, the most any running worker has is ${formatAmount(most)}`
      );
    }
  }
  const wanted = Object.entries(restrictions)
    .map(([name, amount]) => `${name}=${formatAmount(amount)}`)
    .join(", ");
  return `no single running worker has all of the resources the task needs (${wanted})`;
}
