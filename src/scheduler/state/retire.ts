/**
 * `retire-workers` (Dask's `Scheduler.retire_workers`): remove workers from
 * the cluster without losing what they hold. Each worker named stops getting
 * tasks (the scheduler pauses it, and tells it to pause, so that it starts
 * nothing new); each result it holds that no other running worker holds is
 * copied to the least loaded running worker without one (`acquire-replicas`,
 * as for `replicate`); once none is left, the worker is told to close
 * (`close-worker`) and removed as a worker that left on purpose: its tasks not
 * finished go back to be scheduled elsewhere, without counting against them.
 * The client is answered `workers-retired` once every worker named is retired
 * or cannot be.
 *
 * Where Dask's Active Memory Manager plans the copies, this is checked after
 * every stimulus while a retirement is under way: a copy that fails, or whose
 * worker leaves or is retired too, is asked for again of another worker, and a
 * result the retiring worker computes meanwhile is copied as well (the Active
 * Memory Manager leaves the keys a retiring worker holds alone meanwhile: see
 * {@link workersBeingRetired}). A worker
 * whose results no other running worker can take is not retired: it is
 * resumed, and named in `failed`.
 *
 * Nor is a worker that an actor runs or lives on (Dask's `RetireWorker`
 * policy: "it holds actor(s) …, which can't be moved. The worker will not be
 * retired."): an actor's object cannot be copied, and closing the worker would
 * lose it (a wanted actor would then err, `ACTOR_LOST`). The handles to
 * actors living elsewhere that the worker fetched as inputs are not copied
 * either: they go with it.
 */

import type { RetireWorkersMsg } from "../../protocol/messagesClient.ts";
import { isInvolved } from "./bookkeeping.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { namedWorkers } from "./placement.ts";
import { askForCopies } from "./replicate.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";
import { removeWorker, workerStatusChange } from "./workerLifecycle.ts";

/** One `retire-workers` request under way. */
export class Retirement {
  /** The workers still being retired. */
  readonly workers = new Set<WorkerInfo>();
  /** The addresses of the workers retired so far. */
  readonly retired: string[] = [];
  /** The workers that could not be retired, each with why. */
  readonly failed: { worker: string; reason: string }[] = [];
  /** The copies asked for: key → the worker asked to fetch it. */
  readonly copies = new Map<TaskState, WorkerInfo>();
  /**
   * Each worker's own status: as before its retirement, then as it reports
   * (its memory monitor may pause or resume it meanwhile); restored if the
   * retirement fails.
   */
  readonly reported = new Map<WorkerInfo, "running" | "paused">();
  /** The workers this retirement told to pause: told to resume if it fails. */
  readonly pausedHere = new Set<WorkerInfo>();
  /**
   * Whether its workers must be looked at again (every key each holds): after
   * any stimulus but a worker's `add-keys`, which only adds replicas. A copy
   * arriving then settles its key alone ({@link onTheWay}): a worker sends one
   * `add-keys` a key, and looking at every key each time was quadratic.
   */
  dirty = true;
  /** The copies on their way at the last look, each settled as it arrives. */
  readonly onTheWay = new Set<TaskState>();

  constructor(
    /** The client that asked, which the answer goes to. */
    readonly client: ClientInfo,
    /** The stimulus of the request, which the answer carries back. */
    readonly stimulusId: string,
  ) {}
}

/** True if `ws` is being retired. */
export function isRetiring(s: SchedulerState, ws: WorkerInfo): boolean {
  for (const r of s.retirements) if (r.workers.has(ws)) return true;
  return false;
}

/** The workers being retired, over every retirement under way. */
export function workersBeingRetired(s: SchedulerState): Set<WorkerInfo> {
  const workers = new Set<WorkerInfo>();
  for (const r of s.retirements) for (const ws of r.workers) workers.add(ws);
  return workers;
}

/**
 * A worker reported its own status (`worker-status-change`): if it is being
 * retired, it stays paused, and returns to that status if the retirement
 * fails. False if it is not being retired.
 */
export function retiringWorkerReported(
  s: SchedulerState,
  ws: WorkerInfo,
  status: "running" | "paused",
): boolean {
  let retiring = false;
  for (const r of s.retirements) {
    if (!r.workers.has(ws)) continue;
    r.reported.set(ws, status);
    retiring = true;
  }
  return retiring;
}

/**
 * The `n` workers best retired (Dask's `workers_to_close` given `n`): those
 * running no task first, then those running fewest, each group holding fewest
 * bytes first (ties by address); never one being retired already, nor, as
 * Dask's, one running a long-running (seceded) task: such a task, often a
 * client of its own submitting others, would start again from scratch
 * elsewhere. Workers with actors come last: their retirement fails (an actor
 * cannot move), so that a scale-down picking them would keep failing (Dask
 * does not look).
 */
export function workersToClose(s: SchedulerState, n: number): WorkerInfo[] {
  const candidates = downscalable(s);
  candidates.sort(
    (a, b) =>
      Number(a.actors.size > 0) - Number(b.actors.size > 0) ||
      a.processing.size - b.processing.size ||
      a.nbytes - b.nbytes ||
      (a.address < b.address ? -1 : a.address > b.address ? 1 : 0),
  );
  return candidates.slice(0, n);
}

/** The workers a scale-down may pick: not being retired, running no long-running task (Dask's `valid_workers`). */
function downscalable(s: SchedulerState): WorkerInfo[] {
  return [...s.workers.values()].filter((ws) => !isRetiring(s, ws) && ws.longRunning.size === 0);
}

/** Dask's `memory_ratio` of `workers_to_close()`: the limits left must be twice the bytes held. */
const MEMORY_RATIO = 2;

/**
 * The workers that can be spared (Dask's `workers_to_close()` with nothing
 * given, as `retire_workers()` with nothing named): none if every worker is
 * running a task; else the workers running none, fewest bytes held first
 * (ties by address), each as long as the `memoryLimit`s of the workers left
 * (0 for one without) add up to at least twice the bytes all of them hold.
 * Without any limit, that is every idle worker when nothing is held, and none
 * otherwise. Never one being retired already, one running a long-running
 * (seceded) task (as Dask's), nor one holding an actor.
 */
export function idleWorkersToClose(s: SchedulerState): WorkerInfo[] {
  if ([...s.workers.values()].every((ws) => ws.processing.size > 0)) return [];
  const candidates = downscalable(s);
  let limit = 0;
  let total = 0;
  for (const ws of candidates) {
    limit += ws.memoryLimit ?? 0;
    total += ws.nbytes;
  }
  // A worker holding an actor cannot be spared: its retirement would fail.
  const idle = candidates.filter((ws) => ws.processing.size === 0 && ws.actors.size === 0);
  idle.sort(
    (a, b) => a.nbytes - b.nbytes || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0),
  );
  const out: WorkerInfo[] = [];
  for (const ws of idle) {
    limit -= ws.memoryLimit ?? 0;
    if (limit < MEMORY_RATIO * total) break;
    out.push(ws);
  }
  return out;
}

/** The workers a `retire-workers` asks for: those named, `n` picked, or the idle ones to spare. */
function workersToRetire(s: SchedulerState, msg: RetireWorkersMsg): Set<string> {
  if (msg.n !== undefined) return new Set(workersToClose(s, msg.n).map((ws) => ws.address));
  if (msg.workers === undefined) return new Set(idleWorkersToClose(s).map((ws) => ws.address));
  return new Set(msg.workers);
}

/**
 * Handle `retire-workers`: pause the workers named (or, given `n`, those
 * {@link workersToClose} picks; given neither, those
 * {@link idleWorkersToClose} picks), then move their data (see
 * {@link advanceRetirements}).
 */
export function retireWorkers(s: SchedulerState, msg: RetireWorkersMsg): void {
  const r = new Retirement(s.ensureClient(msg.clientId), s.stimulusId);
  const { workers, unmatched } = namedWorkers(s, workersToRetire(s, msg));
  for (const ws of workers) {
    if (isRetiring(s, ws)) {
      r.failed.push({ worker: ws.address, reason: "it is being retired already" });
      continue;
    }
    r.workers.add(ws);
    r.reported.set(ws, ws.status === "paused" ? "paused" : "running");
    if (ws.status === "running") {
      workerStatusChange(s, ws, "paused");
      s.sendToWorker(ws, { op: "pause", stimulusId: s.stimulusId });
      r.pausedHere.add(ws);
    }
  }
  for (const name of unmatched) {
    r.failed.push({ worker: name, reason: "no connected worker matches it" });
  }
  s.retirements.add(r);
  advance(s, r);
}

/**
 * Advance every retirement under way: after each stimulus, while there are
 * any. `onlyAdded`: the stimulus only added replicas (an `add-keys` that
 * removed none), which {@link retirementReplicaAdded} took account of.
 */
export function advanceRetirements(s: SchedulerState, onlyAdded: boolean): void {
  for (const r of [...s.retirements]) {
    if (!onlyAdded) r.dirty = true;
    if (r.dirty) advance(s, r);
  }
}

/** `ws` now holds a replica of `ts` (`add-keys`): a copy a retirement waited for may have come. */
export function retirementReplicaAdded(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  for (const r of s.retirements) {
    // A worker being retired got a key: it must be moved too.
    if (r.workers.has(ws)) r.dirty = true;
    else if (r.copies.get(ts) === ws) {
      // Arrived, no longer on its way (as a look at every key would note): should
      // its recipient let it go again, another is asked for.
      r.copies.delete(ts);
      // The last copy waited for: retire, or ask for more.
      if (r.onTheWay.delete(ts) && r.onTheWay.size === 0) r.dirty = true;
    }
  }
}

/** A copy asked for by retirement `r` failed: `ws` could not fetch `ts` (it is asked of another). */
export function retirementCopyFailed(s: SchedulerState, ts: TaskState, ws: WorkerInfo): void {
  for (const r of s.retirements) {
    if (r.copies.get(ts) === ws) {
      r.copies.delete(ts);
      r.dirty = true;
    }
  }
}

/**
 * `ts` lost every replica (released, forgotten or lost): no retirement copy of
 * it will come, and none is needed. Each worker asked to fetch one is told to
 * stop (`free-keys`), as for `replicate` (see `replicatedKeyLost`): it would
 * otherwise fetch it for good, and find it still fetching when asked to compute
 * it.
 */
export function retirementKeyLost(s: SchedulerState, ts: TaskState): void {
  for (const r of s.retirements) {
    const to = r.copies.get(ts);
    if (to === undefined) continue;
    r.copies.delete(ts);
    r.dirty = true;
    if (s.workers.get(to.address) === to && !isInvolved(ts, to)) s.freeKeys(to, ts.key);
  }
}

/** Why `ws` cannot be retired if an actor runs or lives on it, else null. */
function heldActorReason(ws: WorkerInfo): string | null {
  for (const ts of ws.actors) return `it holds actor ${ts.key}, which cannot be moved`;
  return null;
}

function advance(s: SchedulerState, r: Retirement): void {
  r.dirty = false;
  r.onTheWay.clear();
  const asked = new Map<WorkerInfo, TaskState[]>();
  for (const ws of [...r.workers]) {
    if (s.workers.get(ws.address) !== ws) {
      r.workers.delete(ws);
      r.failed.push({ worker: ws.address, reason: "it left before its data was moved" });
      continue;
    }
    let waiting = false;
    // Why it cannot be retired, once found: first, an actor running or living on it.
    let stuck = heldActorReason(ws);
    for (const ts of ws.hasWhat) {
      if (stuck !== null) break;
      // A copy that arrived is no longer on its way: should its recipient let it
      // go again (a replicate's trim, a rebalance), another is asked for.
      const copiedTo = r.copies.get(ts);
      if (copiedTo !== undefined && ts.whoHas.has(copiedTo)) r.copies.delete(ts);
      // An actor here is a handle to one living elsewhere (none lives here, by
      // now), which a copy would not save.
      if (ts.actor || heldElsewhere(s, ts, ws)) continue;
      const to = r.copies.get(ts);
      if (to !== undefined && isCandidate(s, to)) {
        waiting = true; // on its way
        r.onTheWay.add(ts);
        continue;
      }
      const recipient = leastLoadedWithout(s, ts);
      if (recipient === null) {
        stuck = `no other running worker can take its copy of ${ts.key}`;
        break;
      }
      r.copies.set(ts, recipient);
      r.onTheWay.add(ts);
      const keys = asked.get(recipient);
      if (keys === undefined) asked.set(recipient, [ts]);
      else keys.push(ts);
      waiting = true;
    }
    if (stuck !== null) {
      r.workers.delete(ws);
      r.failed.push({ worker: ws.address, reason: stuck });
      if (r.pausedHere.has(ws)) {
        s.sendToWorker(ws, { op: "unpause", stimulusId: r.stimulusId });
      }
      if (r.reported.get(ws) === "running") workerStatusChange(s, ws, "running");
    } else if (!waiting) {
      r.workers.delete(ws);
      r.retired.push(ws.address);
      // The retirement's stimulus id: what the worker is told comes from the request.
      s.sendToWorker(ws, { op: "close-worker", reason: "retired", stimulusId: r.stimulusId });
      removeWorker(s, ws.address, true);
    }
  }
  askForCopies(s, asked);
  if (r.workers.size === 0) finish(s, r);
}

/** End `r`, whose workers are all retired or failed, and answer its client. */
function finish(s: SchedulerState, r: Retirement): void {
  r.copies.clear();
  s.retirements.delete(r);
  if (s.clients.get(r.client.id) !== r.client) return; // the client left
  s.sendToClient(r.client, {
    op: "workers-retired",
    retired: r.retired,
    failed: r.failed,
    stimulusId: r.stimulusId,
  });
}

/**
 * End every retirement under way, each worker still being retired failing
 * with `reason` (the cluster restarts: every worker closes anyway).
 */
export function abandonRetirements(s: SchedulerState, reason: string): void {
  for (const r of [...s.retirements]) {
    for (const ws of r.workers) r.failed.push({ worker: ws.address, reason });
    r.workers.clear();
    finish(s, r);
  }
}

/** A worker that may take copies: connected, running and not being retired. */
function isCandidate(s: SchedulerState, ws: WorkerInfo): boolean {
  return s.workers.get(ws.address) === ws && s.running.has(ws) && !isRetiring(s, ws);
}

/** True if a worker other than `ws` that may take copies holds `ts`. */
function heldElsewhere(s: SchedulerState, ts: TaskState, ws: WorkerInfo): boolean {
  for (const holder of ts.whoHas) if (holder !== ws && isCandidate(s, holder)) return true;
  return false;
}

/** The running worker not being retired that holds least and no copy of `ts`, or null. */
function leastLoadedWithout(s: SchedulerState, ts: TaskState): WorkerInfo | null {
  let best: WorkerInfo | null = null;
  for (const ws of s.running) {
    if (ts.whoHas.has(ws) || isRetiring(s, ws)) continue;
    if (
      best === null ||
      ws.nbytes < best.nbytes ||
      (ws.nbytes === best.nbytes && ws.address < best.address)
    ) {
      best = ws;
    }
  }
  return best;
}
