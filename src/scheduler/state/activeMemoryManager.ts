/**
 * The Active Memory Manager with its one default policy, ReduceReplicas
 * (Dask's `ActiveMemoryManagerExtension.run_once` and `ReduceReplicas.run`,
 * which Dask runs every 2 s): replicas of in-memory keys that workers fetched
 * as inputs would otherwise stay for as long as the key lives, so a round
 * drops those beyond what is needed.
 *
 * For each key held by more than one worker ({@link SchedulerState.replicatedTasks}),
 * the replicas needed are the most of: one; the number `replicate` last asked
 * for, or a broadcast `scatter` put it on ({@link TaskState.replicasWanted}:
 * Dask always wants one, and so undoes both); and one per distinct worker its waiters are processing on,
 * plus one per waiter not yet assigned (Dask's caution: it may be placed on a
 * holder). The rest are dropped, one at a time, each from the holder that
 * {@link findDropper} picks. An actor is never touched: its object lives on
 * one worker, and the other holders have handles to it.
 *
 * The drops are grouped into one `remove-replicas` per worker (Dask's
 * `_enact_suggestions`), and the scheduler forgets each replica at once, as
 * Dask's `request_remove_replicas` does. The worker does not refuse: as
 * Dask's, it releases any of the keys it holds in memory, and fails
 * (`Cannot remove replica … while … in state executing`) if a task executing
 * or long-running there needs one. So the scheduler never asks a worker that
 * a waiter of the key is processing on (executing, or queued there to run),
 * and never drops the last replica. A worker that reports the key again
 * (`add-keys`) has the replica reinstated, as any `add-keys` does.
 */

import { removeReplica } from "./bookkeeping.ts";
import { isNamedWorker } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * One round of ReduceReplicas: ask workers to drop the replicas not needed
 * (see the module comment). Returns how many it asked to drop.
 */
export function reduceReplicas(s: SchedulerState): number {
  if (s.replicatedTasks.size === 0) return 0;
  // Each worker's memory as the round's drops leave it (Dask's `workers_memory`).
  const memory = new Map<WorkerInfo, number>();
  const drops = new Map<WorkerInfo, TaskState[]>();
  for (const ts of s.replicatedTasks) {
    if (ts.actor || ts.state !== "memory") continue;
    const excess = ts.whoHas.size - replicasNeeded(ts);
    if (excess <= 0) continue;
    // The workers asked to drop `ts` this round (Dask's `pending_drop`).
    const dropping = new Set<WorkerInfo>();
    for (let i = 0; i < excess; i++) {
      const ws = findDropper(s, ts, dropping, memory);
      if (ws === null) break;
      dropping.add(ws);
      memory.set(ws, Math.max(0, memoryOf(ws, memory) - s.getNbytes(ts)));
    }
    for (const ws of dropping) {
      const keys = drops.get(ws);
      if (keys === undefined) drops.set(ws, [ts]);
      else keys.push(ts);
    }
  }
  let dropped = 0;
  for (const [ws, keys] of drops) {
    // Forgotten now: the iteration above is over, so `replicatedTasks` may change.
    for (const ts of keys) removeReplica(s, ts, ws);
    const names = keys.map((ts) => ts.key);
    s.sendToWorker(ws, { op: "remove-replicas", keys: names, stimulusId: s.stimulusId });
    dropped += keys.length;
  }
  s.replicasDropped += dropped;
  return dropped;
}

/**
 * The replicas of `ts` to keep: one, the count `replicate` asked for, or one
 * per distinct worker its waiters are processing on plus one per waiter not
 * yet assigned, whichever is most.
 */
export function replicasNeeded(ts: TaskState): number {
  const places = new Set<WorkerInfo | TaskState>();
  for (const waiter of itemsOf(ts.waiters)) places.add(waiter.processingOn ?? waiter);
  return Math.max(1, ts.replicasWanted, places.size);
}

/**
 * The holder of `ts` to drop a replica, or null if none may: never one
 * already dropping it this round, nor one a waiter of `ts` is processing on
 * (the worker needs it, and would refuse), nor one of the workers a
 * `replicate` named while no more than it asked for are left there, and
 * never the last replica. Among
 * the others, a worker not running (paused, retiring) first, as Dask's
 * `_find_dropper`, then the one with the most memory, the address breaking
 * ties so that runs repeat.
 */
function findDropper(
  s: SchedulerState,
  ts: TaskState,
  dropping: ReadonlySet<WorkerInfo>,
  memory: ReadonlyMap<WorkerInfo, number>,
): WorkerInfo | null {
  if (ts.whoHas.size - dropping.size < 2) return null;
  const needed = new Set<WorkerInfo>();
  for (const waiter of itemsOf(ts.waiters)) {
    if (waiter.processingOn !== null) needed.add(waiter.processingOn);
  }
  // A `replicate` that named workers asked for its replicas among them: those
  // stay while no more are left there than it asked for.
  const named = ts.replicasWantedOn;
  let keepNamed = false;
  if (named !== null) {
    let left = 0;
    for (const ws of ts.whoHas) if (!dropping.has(ws) && isNamedWorker(ws, named)) left++;
    keepNamed = left <= ts.replicasWanted;
  }
  let best: WorkerInfo | null = null;
  for (const ws of ts.whoHas) {
    if (dropping.has(ws) || needed.has(ws)) continue;
    if (keepNamed && named !== null && isNamedWorker(ws, named)) continue;
    if (best === null || isBetterDropper(s, ws, best, memory)) best = ws;
  }
  return best;
}

function isBetterDropper(
  s: SchedulerState,
  ws: WorkerInfo,
  than: WorkerInfo,
  memory: ReadonlyMap<WorkerInfo, number>,
): boolean {
  const running = s.running.has(ws);
  if (running !== s.running.has(than)) return !running;
  const a = memoryOf(ws, memory);
  const b = memoryOf(than, memory);
  if (a !== b) return a > b;
  return ws.address < than.address;
}

/**
 * A worker's memory as this round's drops leave it. Dask measures
 * `memory.optimistic` (managed bytes plus the unmanaged memory that has
 * lasted); weft's nearest is `nbytes`, the managed bytes of the results the
 * scheduler knows the worker holds, since a heartbeat's `memory` (the whole
 * process) lags behind the drops and copies of a round.
 */
function memoryOf(ws: WorkerInfo, memory: ReadonlyMap<WorkerInfo, number>): number {
  return memory.get(ws) ?? ws.nbytes;
}
