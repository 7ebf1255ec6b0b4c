/**
 * `rebalance` (Dask's `Scheduler.rebalance`): even out the bytes held by the
 * allowed running workers by moving results from those above the mean to
 * those below. A move is a copy, fetched by the recipient as for
 * `replicate` (`acquire-replicas`), and then, once the recipient's `add-keys`
 * says it arrived, the removal of the sender's copy (`remove-replicas`): a
 * key is never held by no one while it moves. The client is answered
 * `rebalanced` once every copy has arrived or cannot come.
 *
 * Which moves: the senders, fullest first, give their largest keys, each to
 * the recipient holding least, as long as the sender is above the mean and
 * the recipient ends no fuller than the sender (Dask's rule, which keeps a
 * move from turning the imbalance around). Bytes are the results' sizes the
 * workers reported, Dask's `managed` measure. Like `replicate`'s trimming, a
 * sender running a task that needs a key keeps it: that key does not move.
 *
 * A worker that registered a `memoryLimit` is weighed against it, with Dask's
 * defaults (`distributed.worker.memory.rebalance`): it gives only while it
 * holds at least 30% of its limit (`sender-min`), takes only while it holds
 * less than 60% (`recipient-max`), and either only beyond half of 10% of its
 * limit (`sender-recipient-gap`) from the mean, so that workers near the mean
 * are left alone. A worker without a limit has none of these bounds.
 *
 * Actors never move: their objects live where they ran (and a copy of one is
 * a handle to it). A rebalance of everything passes them over; one naming an
 * actor's key lists it in `failed` ({@link ACTOR_STAYS}).
 */

import type { RebalanceMsg } from "../../protocol/messagesClient.ts";
import { runsDependentOf } from "./bookkeeping.ts";
import {
  ACTOR_STAYS,
  allowedWorkers,
  answer,
  askForCopies,
  noWorkerReason,
  Replication,
  track,
} from "./replicate.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** Handle `rebalance`: plan the moves, ask the recipients to fetch, answer once settled. */
export function rebalance(s: SchedulerState, msg: RebalanceMsg): void {
  const r = new Replication(s.ensureClient(msg.clientId), s.stimulusId, "rebalance");
  const allowed = allowedWorkers(s, msg.workers);
  /** The keys that may move, or null for any in memory. */
  let movable: Set<TaskState> | null = null;
  if (msg.keys !== undefined) {
    movable = new Set();
    for (const key of new Set(msg.keys)) {
      const ts = s.tasks.get(key);
      if (ts === undefined || ts.state !== "memory") {
        const why = ts === undefined ? "the scheduler does not know it" : `it is ${ts.state}`;
        r.failKey(key, `${why}, not in memory`);
      } else if (ts.actor) {
        r.failKey(key, ACTOR_STAYS);
      } else if (allowed.length === 0) {
        r.failKey(key, noWorkerReason(msg.workers));
      } else {
        movable.add(ts);
      }
    }
  }
  const perRecipient = new Map<WorkerInfo, TaskState[]>();
  for (const move of planMoves(s, allowed, movable)) {
    const { ts, sender, recipient } = move;
    let targets = r.pending.get(ts);
    if (targets === undefined) r.pending.set(ts, (targets = new Set()));
    targets.add(recipient);
    let moves = r.moves.get(ts);
    if (moves === undefined) r.moves.set(ts, (moves = new Map()));
    moves.set(recipient, sender);
    const keys = perRecipient.get(recipient);
    if (keys === undefined) perRecipient.set(recipient, [ts]);
    else keys.push(ts);
  }
  askForCopies(s, perRecipient);
  if (r.pending.size === 0) answer(s, r);
  else track(s, r);
}

/** Dask's `distributed.worker.memory.rebalance` defaults, as shares of a worker's memory limit. */
const SENDER_MIN = 0.3;
const RECIPIENT_MAX = 0.6;
const HALF_GAP = 0.1 / 2;

/** How far from the mean `ws` must be to give or take (half the gap; 0 without a limit). */
function halfGap(ws: WorkerInfo): number {
  return ws.memoryLimit === null ? 0 : HALF_GAP * ws.memoryLimit;
}

/** True if `ws` gives: beyond the gap above the mean, and holding at least `sender-min`. */
function isSender(ws: WorkerInfo, mean: number): boolean {
  if (ws.nbytes <= mean + halfGap(ws)) return false;
  return ws.memoryLimit === null || ws.nbytes >= SENDER_MIN * ws.memoryLimit;
}

/** True if `ws` takes: beyond the gap below the mean, and holding less than `recipient-max`. */
function isRecipient(ws: WorkerInfo, mean: number): boolean {
  if (ws.nbytes >= mean - halfGap(ws)) return false;
  return ws.memoryLimit === null || ws.nbytes < RECIPIENT_MAX * ws.memoryLimit;
}

/** One planned move: `recipient` fetches `ts`, then `sender` drops its copy. */
interface Move {
  readonly ts: TaskState;
  readonly sender: WorkerInfo;
  readonly recipient: WorkerInfo;
}

/**
 * The moves that bring `allowed` (least loaded first) nearer their mean of
 * bytes held, moving only keys of `movable` (null: any). A key moves once,
 * and not while copies of it are on their way for another request.
 */
function planMoves(
  s: SchedulerState,
  allowed: readonly WorkerInfo[],
  movable: ReadonlySet<TaskState> | null,
): Move[] {
  if (allowed.length < 2) return [];
  /** Bytes each worker will hold once the planned moves are made. */
  const held = new Map<WorkerInfo, number>();
  let total = 0;
  for (const ws of allowed) {
    held.set(ws, ws.nbytes);
    total += ws.nbytes;
  }
  const mean = total / allowed.length;
  const recipients = allowed.filter((ws) => isRecipient(ws, mean));
  const senders = allowed.filter((ws) => isSender(ws, mean)).reverse(); // fullest first
  const moving = new Set<TaskState>();
  for (const r of s.replications) for (const ts of r.pending.keys()) moving.add(ts);
  const moves: Move[] = [];
  for (const sender of senders) {
    const keys: TaskState[] = [];
    for (const ts of sender.hasWhat) {
      if (movable !== null && !movable.has(ts)) continue;
      if (ts.state !== "memory" || ts.actor || moving.has(ts) || runsDependentOf(ts, sender)) {
        continue;
      }
      keys.push(ts);
    }
    // Largest first; the key breaks ties, so that runs repeat.
    keys.sort((a, b) => s.getNbytes(b) - s.getNbytes(a) || (a.key < b.key ? -1 : 1));
    for (const ts of keys) {
      const from = held.get(sender) as number;
      // Once chosen, a sender gives down to the gap even below sender-min, and a
      // recipient takes up to it even beyond recipient-max, as in Dask.
      if (from <= mean + halfGap(sender)) break;
      const nbytes = s.getNbytes(ts);
      if (nbytes <= 0) break; // the rest are empty too: moving them evens nothing out
      let recipient: WorkerInfo | null = null;
      for (const ws of recipients) {
        if (ts.whoHas.has(ws)) continue;
        if (recipient === null || (held.get(ws) as number) < (held.get(recipient) as number)) {
          recipient = ws;
        }
      }
      if (recipient === null) continue;
      const to = held.get(recipient) as number;
      if (to + nbytes > from - nbytes) continue; // the recipient would end the fuller
      held.set(sender, from - nbytes);
      held.set(recipient, to + nbytes);
      if (to + nbytes >= mean - halfGap(recipient)) {
        recipients.splice(recipients.indexOf(recipient), 1);
      }
      moving.add(ts);
      moves.push({ ts, sender, recipient });
    }
  }
  return moves;
}
