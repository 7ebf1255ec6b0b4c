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
 * holder). The rest are dropped, each from the holder that
 * {@link findDroppers} picks. An actor is never touched: its object lives on
 * one worker, and the other holders have handles to it.
 *
 * A key a worker being retired holds is left alone until the retirement is
 * over ({@link leftToRetirements}). The retiring worker keeps the tasks
 * assigned to it until it closes, and so its replicas of their inputs: a
 * round would drop the retirement's new copy on a running worker instead,
 * which the retirement would ask for again, round after round (it ended only
 * if every copy arrived between two rounds). The retirement settles the key
 * (it copies it, or the worker's replica goes with the worker), and the
 * rounds after it trim what is left. A copy on its way is not a replica yet:
 * there is nothing to drop before it arrives.
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
import { workersBeingRetired } from "./retire.ts";
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
  const retiring = workersBeingRetired(s);
  // Each worker's memory as the round's drops leave it (Dask's `workers_memory`).
  const memory = new Map<WorkerInfo, number>();
  const drops = new Map<WorkerInfo, TaskState[]>();
  for (const ts of s.replicatedTasks) {
    if (ts.actor || ts.state !== "memory") continue;
    const { needed, protectedOn } = replicasNeededAndProtected(ts);
    const excess = ts.whoHas.size - needed;
    if (excess <= 0 || leftToRetirements(ts, retiring)) continue;
    const nbytes = s.getNbytes(ts);
    for (const ws of findDroppers(s, ts, excess, protectedOn, memory)) {
      memory.set(ws, Math.max(0, memoryOf(ws, memory) - nbytes));
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
 * True if a holder of `ts` is being retired (`retiring`): the retirement
 * settles the key, and the round leaves it alone (see the module comment).
 */
function leftToRetirements(ts: TaskState, retiring: ReadonlySet<WorkerInfo>): boolean {
  if (retiring.size === 0) return false;
  for (const ws of ts.whoHas) if (retiring.has(ws)) return true;
  return false;
}

/**
 * The replicas of `ts` to keep: one, the count `replicate` asked for, or one
 * per distinct worker its waiters are processing on plus one per waiter not
 * yet assigned, whichever is most; and the workers its waiters are processing
 * on (which keep theirs), in one pass over the waiters.
 */
function replicasNeededAndProtected(ts: TaskState): {
  needed: number;
  protectedOn: Set<WorkerInfo>;
} {
  const protectedOn = new Set<WorkerInfo>();
  let unassigned = 0;
  for (const waiter of itemsOf(ts.waiters)) {
    if (waiter.processingOn !== null) protectedOn.add(waiter.processingOn);
    else unassigned++;
  }
  return { needed: Math.max(1, ts.replicasWanted, protectedOn.size + unassigned), protectedOn };
}

/**
 * The holders of `ts` to drop `excess` replicas from (fewer if fewer may):
 * never one a waiter of `ts` is processing on (`protectedOn`: it needs the
 * key, and a worker asked to drop an input of a task executing there fails),
 * nor one of the workers a `replicate` named while no more than it asked for
 * are left there, and never the last replica. Among the others, a worker not
 * running (paused) first, as Dask's `_find_dropper`, then the one with the
 * most memory, the address breaking ties so that runs repeat.
 *
 * Dask picks one dropper at a time, each time from all the holders; the
 * order of the candidates does not change between picks (only the dropped
 * worker's memory does, and it is no longer a candidate), so they are
 * ordered once and taken from the front, skipping the named workers once
 * `replicate`'s count is reached among them (which, once reached, stays).
 */
function findDroppers(
  s: SchedulerState,
  ts: TaskState,
  excess: number,
  protectedOn: ReadonlySet<WorkerInfo>,
  memory: ReadonlyMap<WorkerInfo, number>,
): WorkerInfo[] {
  const named = ts.replicasWantedOn;
  const candidates: { ws: WorkerInfo; running: boolean; memory: number; named: boolean }[] = [];
  // How many holders a `replicate` that named workers counts among them.
  let namedLeft = 0;
  for (const ws of ts.whoHas) {
    const isNamed = named !== null && isNamedWorker(ws, named);
    if (isNamed) namedLeft++;
    if (protectedOn.has(ws)) continue;
    candidates.push({
      ws,
      running: s.running.has(ws),
      memory: memoryOf(ws, memory),
      named: isNamed,
    });
  }
  candidates.sort(
    (a, b) =>
      Number(a.running) - Number(b.running) ||
      b.memory - a.memory ||
      (a.ws.address < b.ws.address ? -1 : a.ws.address > b.ws.address ? 1 : 0),
  );
  // Never the last replica: at most `whoHas.size - 1` go.
  const most = Math.min(excess, ts.whoHas.size - 1);
  const out: WorkerInfo[] = [];
  for (const c of candidates) {
    if (out.length >= most) break;
    if (c.named) {
      // A `replicate` that named workers keeps its replicas among them.
      if (namedLeft <= ts.replicasWanted) continue;
      namedLeft--;
    }
    out.push(c.ws);
  }
  return out;
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
