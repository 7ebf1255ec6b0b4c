/**
 * `replicate` (Dask's `Scheduler.replicate`): each key in memory ends up on
 * `n` of the allowed workers. The scheduler asks each chosen worker to fetch
 * its copies (`acquire-replicas`, which the worker's state machine carries
 * out as the seed's `AcquireReplicasEvent`) and answers the client once every
 * copy has arrived (`add-keys`) or cannot: the worker left, could not fetch
 * it, or the key left memory. Copies beyond `n` on allowed workers are
 * dropped (`remove-replicas`, the seed's `RemoveReplicasEvent`) without
 * waiting, as Dask's `delete=True`. An actor is never copied nor trimmed
 * (Dask's Active Memory Manager rejects it: "task is an actor"): its object
 * lives on one worker, and a copy would be a handle to it, so the key is
 * listed in `failed` with {@link ACTOR_STAYS}.
 */

import type { ReplicateMsg } from "../../protocol/messagesClient.ts";
import { holderAddresses, isInvolved, removeReplica, runsDependentOf } from "./bookkeeping.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { isNamedWorker } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/**
 * Why `replicate` and `rebalance` (a key named in it) leave an actor where it
 * is, in their answer's `failed`.
 */
export const ACTOR_STAYS = "it is an actor, which stays on the worker it lives on";

/** One `replicate` (or `rebalance`) request still waiting for copies. */
export class Replication {
  /** The copies not arrived yet: key → the workers asked to fetch it. */
  readonly pending = new Map<TaskState, Set<WorkerInfo>>();
  /** Keys that will not get every copy asked for, with why (the first reason each). */
  readonly failed: { key: string; reason: string }[] = [];
  /** The keys of {@link failed}: each is named once, in O(1) (thousands may fail at once). */
  private readonly failedKeys = new Set<string>();
  /**
   * A `rebalance`'s moves: key → recipient → the sender whose copy goes once
   * the recipient's has arrived. Empty for a `replicate`.
   */
  readonly moves = new Map<TaskState, Map<WorkerInfo, WorkerInfo>>();
  /** Moves whose copy arrived and whose sender was asked to drop its own. */
  moved = 0;

  constructor(
    /** The client that asked, which the answer goes to. */
    readonly client: ClientInfo,
    /** The stimulus of the request, which the answer carries back. */
    readonly stimulusId: string,
    /** What the request is, and so how it is answered. */
    readonly kind: "replicate" | "rebalance" = "replicate",
  ) {}

  /** Note that the copy of `ts` on `ws` will not come. */
  fail(s: SchedulerState, ts: TaskState, ws: WorkerInfo, reason: string): void {
    if (!this.settle(s, ts, ws)) return;
    this.failKey(ts.key, reason);
  }

  /** The copy of `ts` on `ws` is no longer awaited: false if it was not. */
  settle(s: SchedulerState, ts: TaskState, ws: WorkerInfo): boolean {
    const targets = this.pending.get(ts);
    if (targets === undefined || !targets.delete(ws)) return false;
    if (targets.size === 0) {
      this.pending.delete(ts);
      const waiting = s.replicationsByTask.get(ts);
      waiting?.delete(this);
      if (waiting?.size === 0) s.replicationsByTask.delete(ts);
    }
    return true;
  }

  /** Note that `key` will not get every copy asked for, and why (unless noted already). */
  failKey(key: string, reason: string): void {
    if (this.failedKeys.has(key)) return;
    this.failedKeys.add(key);
    this.failed.push({ key, reason });
  }
}

/**
 * Handle `replicate`: choose the workers, ask them to fetch or to drop their
 * copies, answer once the fetches are settled.
 */
export function replicate(s: SchedulerState, msg: ReplicateMsg): void {
  const r = new Replication(s.ensureClient(msg.clientId), s.stimulusId);
  const allowed = allowedWorkers(s, msg.workers);
  const perWorker = new Map<WorkerInfo, TaskState[]>();
  const drops = new Map<WorkerInfo, string[]>();
  for (const key of new Set(msg.keys)) {
    const ts = s.tasks.get(key);
    if (ts === undefined || ts.state !== "memory") {
      const why = ts === undefined ? "the scheduler does not know it" : `it is ${ts.state}`;
      r.failKey(key, `${why}, not in memory`);
      continue;
    }
    if (ts.actor) {
      // Counted as not replicated: the client asked for copies it cannot have.
      r.failKey(key, ACTOR_STAYS);
      continue;
    }
    if (allowed.length === 0) {
      r.failKey(key, noWorkerReason(msg.workers));
      continue;
    }
    const n = Math.min(msg.n ?? allowed.length, allowed.length);
    // Kept by the Active Memory Manager, which would otherwise undo the copies.
    ts.replicasWanted = n;
    ts.replicasWantedOn = msg.workers === undefined ? null : new Set(msg.workers);
    let need = n;
    for (const ws of allowed) if (ts.whoHas.has(ws)) need--;
    if (need < 0) dropExtraCopies(s, ts, allowed, -need, drops);
    if (need <= 0) continue;
    const targets = new Set<WorkerInfo>();
    for (const ws of allowed) {
      if (targets.size === need) break;
      if (ts.whoHas.has(ws)) continue;
      targets.add(ws);
      const keys = perWorker.get(ws);
      if (keys === undefined) perWorker.set(ws, [ts]);
      else keys.push(ts);
    }
    r.pending.set(ts, targets);
  }
  askForCopies(s, perWorker);
  for (const [ws, keys] of drops) {
    s.sendToWorker(ws, { op: "remove-replicas", keys, stimulusId: s.stimulusId });
  }
  if (r.pending.size === 0) answer(s, r);
  else track(s, r);
}

/**
 * Take `excess` copies of `ts` off the busiest of the `allowed` workers
 * (sorted least loaded first) that hold one, noting each in `drops`. The
 * scheduler forgets a copy when it asks for its removal, as Dask's
 * `request_remove_replicas` does; the worker's `release-worker-data` that
 * follows is then stale. A worker running a task that needs `ts` keeps its
 * copy: the seed's worker refuses to drop it (a `RuntimeError`) while such a
 * task executes, so fewer copies may go than asked.
 */
function dropExtraCopies(
  s: SchedulerState,
  ts: TaskState,
  allowed: readonly WorkerInfo[],
  excess: number,
  drops: Map<WorkerInfo, string[]>,
): void {
  for (let i = allowed.length - 1; i >= 0 && excess > 0; i--) {
    const ws = allowed[i];
    if (!ts.whoHas.has(ws) || runsDependentOf(ts, ws)) continue;
    removeReplica(s, ts, ws);
    const keys = drops.get(ws);
    if (keys === undefined) drops.set(ws, [ts.key]);
    else keys.push(ts.key);
    excess--;
  }
}

/** Ask each worker to fetch a copy of its keys from their holders (`acquire-replicas`). */
export function askForCopies(s: SchedulerState, perWorker: Map<WorkerInfo, TaskState[]>): void {
  for (const [ws, keys] of perWorker) {
    const whoHas = new Map<string, string[]>();
    const nbytes = new Map<string, number>();
    for (const ts of keys) {
      whoHas.set(ts.key, holderAddresses(ts));
      nbytes.set(ts.key, s.getNbytes(ts));
    }
    s.sendToWorker(ws, { op: "acquire-replicas", whoHas, nbytes, stimulusId: s.stimulusId });
  }
}

/**
 * The running workers that `workers` (addresses or hosts) allows, all without
 * it: least loaded first, the address breaking ties, so that runs repeat.
 */
export function allowedWorkers(
  s: SchedulerState,
  workers: readonly string[] | undefined,
): WorkerInfo[] {
  const names = workers === undefined ? null : new Set(workers);
  const allowed: WorkerInfo[] = [];
  for (const ws of s.running) if (names === null || isNamedWorker(ws, names)) allowed.push(ws);
  allowed.sort((a, b) => a.nbytes - b.nbytes || (a.address < b.address ? -1 : 1));
  return allowed;
}

/** Why a request's keys get no copy: no allowed worker is running. */
export function noWorkerReason(workers: readonly string[] | undefined): string {
  return workers === undefined
    ? "no worker is running"
    : `none of the workers ${workers.join(", ")} is running`;
}

/** `r` waits for its copies: kept, and found by the tasks it waits for. */
export function track(s: SchedulerState, r: Replication): void {
  s.replications.add(r);
  for (const ts of r.pending.keys()) {
    let waiting = s.replicationsByTask.get(ts);
    if (waiting === undefined) s.replicationsByTask.set(ts, (waiting = new Set()));
    waiting.add(r);
  }
}

/** `r` no longer waits (answered, or dropped with its client). */
function untrack(s: SchedulerState, r: Replication): void {
  s.replications.delete(r);
  for (const ts of r.pending.keys()) {
    const waiting = s.replicationsByTask.get(ts);
    waiting?.delete(r);
    if (waiting?.size === 0) s.replicationsByTask.delete(ts);
  }
}

/** Answer request `r`, now settled (or at once, when it asked for nothing). */
export function answer(s: SchedulerState, r: Replication): void {
  untrack(s, r);
  if (s.clients.get(r.client.id) !== r.client) return; // the client left
  const { failed, stimulusId } = r;
  s.sendToClient(
    r.client,
    r.kind === "replicate"
      ? { op: "replicated", failed, stimulusId }
      : { op: "rebalanced", failed, moved: r.moved, stimulusId },
  );
}

/** `ws` now holds a copy of `ts` (`add-keys`). */
export function replicaArrived(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  const waiting = s.replicationsByTask.get(ts);
  if (waiting === undefined) return;
  for (const r of [...waiting]) {
    if (!r.settle(s, ts, ws)) continue;
    const sender = r.moves.get(ts)?.get(ws);
    if (sender !== undefined && dropMovedCopy(s, ts, sender, r.stimulusId)) r.moved++;
    if (r.pending.size === 0) answer(s, r);
  }
}

/**
 * The copy of `ts` a move made has arrived: ask `sender` to drop its own, if
 * it still holds it, runs no task that needs it, and another copy stays.
 * True if it was asked.
 */
function dropMovedCopy(
  s: SchedulerState,
  ts: TaskState,
  sender: WorkerInfo,
  stimulusId: string,
): boolean {
  if (!ts.whoHas.has(sender) || ts.whoHas.size < 2 || runsDependentOf(ts, sender)) return false;
  removeReplica(s, ts, sender);
  s.sendToWorker(sender, { op: "remove-replicas", keys: [ts.key], stimulusId });
  return true;
}

/** The copy of `ts` on `ws` will not come: the worker could not fetch it. */
export function replicaFailed(
  s: SchedulerState,
  ts: TaskState,
  ws: WorkerInfo,
  reason: string,
): void {
  const waiting = s.replicationsByTask.get(ts);
  if (waiting === undefined) return;
  for (const r of [...waiting]) {
    r.fail(s, ts, ws, reason);
    if (r.pending.size === 0) answer(s, r);
  }
}

/** `ws` left: the copies it was to fetch will not come. */
export function replicatorLeft(s: SchedulerState, ws: WorkerInfo): void {
  if (s.replications.size === 0) return;
  for (const r of [...s.replications]) {
    for (const [ts, targets] of [...r.pending]) {
      if (targets.has(ws)) r.fail(s, ts, ws, `${ws.address} left before it had a copy`);
    }
    if (r.pending.size === 0) answer(s, r);
  }
}

/**
 * `ts` lost every replica (released, forgotten or lost): no copy of it will
 * come. Each worker asked to fetch it is told to stop (`free-keys`): its
 * fetch would otherwise wait for holders for good, and a `compute-task` of the
 * key there (it is often computed again at once) would find it still fetching,
 * which the worker's state machine cannot take (Dask leaves the fetch too).
 */
export function replicatedKeyLost(s: SchedulerState, ts: TaskState): void {
  const waiting = s.replicationsByTask.get(ts);
  if (waiting === undefined) return;
  for (const r of [...waiting]) {
    const targets = r.pending.get(ts);
    if (targets === undefined) continue;
    for (const ws of [...targets]) {
      r.fail(s, ts, ws, "its result was released or lost meanwhile");
      if (s.workers.get(ws.address) === ws && !isInvolved(ts, ws)) s.freeKeys(ws, ts.key);
    }
    if (r.pending.size === 0) answer(s, r);
  }
}

/** The client left: its `replicate` requests are dropped unanswered; its rebalances go on, unanswered. */
export function replicatorClientLeft(s: SchedulerState, cs: ClientInfo): void {
  // A rebalance goes on: its copies are on their way, and its givers' copies
  // are dropped as they arrive (Dask's rebalance does not depend on its client).
  for (const r of [...s.replications]) {
    if (r.client === cs && r.kind === "replicate") untrack(s, r);
  }
}
