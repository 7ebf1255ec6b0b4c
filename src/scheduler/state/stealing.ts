/**
 * Carrying out steals (Dask's `WorkStealing.move_task_request` and
 * `move_task_confirm`): the state machine asks the victim, and moves the task
 * only if the victim confirms it had not started it. What to steal is decided
 * by balancing (`workStealing.ts`, the `balance` stimulus) or named by a
 * `steal-request` stimulus.
 */

import type { StealResponseMsg } from "../../protocol/messagesWorker.ts";
import { addToProcessing, exitProcessing, fitsMemoryLimit, inputsNbytes } from "./bookkeeping.ts";
import type { StealRequestEvent } from "./events.ts";
import { decideWorkerNonRootish, mayRunOn } from "./placement.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { commCost } from "./stealTracking.ts";
import type { TaskState } from "./taskState.ts";
import type { WorkerInfo } from "./workerInfo.ts";

/** Worker states in which the victim gave the task up: the steal goes ahead. */
const CONFIRM: ReadonlySet<string> = new Set(["ready", "constrained", "waiting"]);

/** Worker states in which the victim does not know the task: it must be rescheduled. */
const UNDEFINED: ReadonlySet<string | null> = new Set([null, "released", "forgotten"]);

/**
 * `steal-request` stimulus: if `key` is processing on `victim`, not seceded,
 * not an actor, and not already being stolen, pick the thief (the given one if it is running
 * and may run the task, else the best other worker) and, if the thief's memory
 * limit takes the task's inputs, send `steal-request` to the victim.
 * Otherwise nothing happens.
 */
export function handleStealRequest(s: SchedulerState, ev: StealRequestEvent): void {
  const ts = s.tasks.get(ev.key);
  // An actor is never stolen: placement chose its worker to spread the actors
  // (fewest first), which a thief the shell picks by its own measure would
  // undo, and that worker is where its object will live. (Dask's stealing may
  // move one that has not started, weighing the thieves' actors first.)
  if (ts === undefined || ts.state !== "processing" || ts.actor) return;
  const victim = ts.processingOn;
  if (victim === null || victim.address !== ev.victim) return;
  if (!mayBeStolen(s, ts)) return;
  let thief: WorkerInfo | null;
  if (ev.thief !== undefined) {
    thief = s.workers.get(ev.thief) ?? null;
    if (thief === null || thief === victim || thief.status !== "running" || !mayRunOn(thief, ts)) {
      return;
    }
  } else {
    thief = decideWorkerNonRootish(s, ts, victim);
    if (thief === null) return;
  }
  // A thief whose memory limit its inputs exceed would fail it (see `addToProcessing`).
  if (!fitsMemoryLimit(thief, inputsNbytes(ts))) return;
  requestSteal(s, ts, victim, thief);
}

/**
 * True if `ts`, processing on its worker, may be asked of it: not an actor,
 * not seceded, not already being stolen.
 */
export function mayBeStolen(s: SchedulerState, ts: TaskState): boolean {
  const victim = ts.processingOn;
  return victim !== null && !ts.actor && !victim.longRunning.has(ts) && !s.steals.has(ts);
}

/**
 * Ask `victim` to give up `ts` for `thief` (Dask's `move_task_request`): the
 * task is no longer stealable, and until the answer the thief counts the
 * task's expected duration plus the fetching of its inputs, and the victim
 * no longer counts its share (the in-flight occupancy balancing reads).
 */
export function requestSteal(
  s: SchedulerState,
  ts: TaskState,
  victim: WorkerInfo,
  thief: WorkerInfo,
): void {
  const tracking = s.workStealing;
  tracking.removeKeyFromStealable(ts);
  // The share of the victim's occupancy the task holds (see occupancy.ts).
  const victimDuration = s.taskDuration(ts);
  const thiefDuration = s.taskDuration(ts) + commCost(s, ts, thief);
  s.steals.set(ts, { victim, thief, stimulusId: s.stimulusId, victimDuration, thiefDuration });
  tracking.addInFlight(victim, thief, victimDuration, thiefDuration);
  s.sendToWorker(victim, { op: "steal-request", key: ts.key, stimulusId: s.stimulusId });
}

/**
 * `steal-response` from the victim. If it gave the task up (ready, constrained,
 * waiting), the task moves to the thief with a new run id (counted as
 * `confirmed`, with a `processing → processing` record) — or, if the thief
 * has left or paused meanwhile, goes back through `released` to be placed
 * again. If the victim no longer knew the task, it is rescheduled. If it had
 * started (executing, in memory, …), it stays. Responses nobody waits for,
 * and answers to an earlier request (another stimulus id), are ignored.
 */
export function handleStealResponse(
  s: SchedulerState,
  ws: WorkerInfo,
  msg: StealResponseMsg,
): void {
  const ts = s.tasks.get(msg.key);
  if (ts === undefined) return;
  const steal = s.steals.get(ts);
  // The victim echoes the request's stimulus id: an answer to an earlier
  // request (the task left the victim and came back meanwhile) is stale, and
  // the steal in flight still awaits its own (Dask's `move_task_confirm`).
  if (steal === undefined || steal.victim !== ws || steal.stimulusId !== msg.stimulusId) return;
  s.workStealing.removeInFlight(s, ts);
  if (ts.state !== "processing" || ts.processingOn !== ws) return;

  const state = msg.state;
  if (state !== null && CONFIRM.has(state)) {
    const thief = steal.thief;
    if (s.workers.get(thief.address) !== thief || thief.status !== "running") {
      s.recommend(ts, "released");
      return;
    }
    exitProcessing(s, ts);
    addToProcessing(s, ts, thief);
    // Moved only if it now processes on the thief. The thief is chosen among
    // the workers whose memory limit takes its inputs, but should the check
    // in `addToProcessing` fail there all the same, the task has erred as a
    // freshly placed one would, and that transition is its record: no steal.
    if (ts.state === "processing" && ts.processingOn === thief) {
      s.workStealing.confirmed++;
      s.logSameState(ts);
    }
  } else if (UNDEFINED.has(state)) {
    s.recommend(ts, "released");
  }
}
