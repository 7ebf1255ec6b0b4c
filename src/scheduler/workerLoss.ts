/**
 * What the cluster loses when a worker leaves unannounced (its connection ended: killed,
 * its machine gone; or silent past the TTL), said in the scheduler's log as Dask's
 * `remove_worker` says it: the tasks it was running, which other workers take, and the
 * results only it held, computed again where still needed (a warning: Dask's `Removing
 * worker … caused the cluster to lose already computed task(s), which will be
 * recomputed elsewhere`), or, for scattered values no task computes, lost for good (an
 * error). The log said `worker left` alone, the same for an idle worker as for one
 * whose results a long graph had been building on.
 */

import type { Logger } from "pino";
import { plural } from "../util/plural.ts";
import type { SchedulerState } from "./state/schedulerState.ts";
import type { TaskState } from "./state/taskState.ts";

/** What a worker held as it left. */
export interface WorkerLoss {
  /** Tasks it was running (or had been sent), which go to other workers. */
  readonly processing: number;
  /** Results it held, copies elsewhere included. */
  readonly memory: number;
  /** Results still needed that only it held and a task computes: computed again. */
  readonly recomputed: readonly string[];
  /** Values still needed that only it held and no task computes (scattered): lost. */
  readonly lost: readonly string[];
  /** Actors still needed that it held: lost, their futures failing (never computed again). */
  readonly actors: readonly string[];
}

/**
 * What the worker at `address` holds, read before its removal; null if it is not known.
 * Only results still needed count as lost: by a client other than the worker's own
 * tasks' (`workerOf` names the worker a client's task ran on), which go with it, or by
 * a task waiting for them that is itself needed so: a `LocalCluster` closing its
 * workers before its scheduler warned of the results of tasks that submitted tasks,
 * and of those a graph such a task submitted was still waiting for.
 */
export function workerLoss(
  state: SchedulerState,
  address: string,
  workerOf: (client: string) => string | undefined,
): WorkerLoss | null {
  const ws = state.workers.get(address);
  if (ws === undefined) return null;
  const needed = neededBeyond(address, workerOf);
  const recomputed: string[] = [];
  const lost: string[] = [];
  const actors: string[] = [];
  for (const ts of ws.hasWhat) {
    if (ts.whoHas.size !== 1 || !needed(ts)) continue;
    (ts.actor ? actors : ts.runSpec === null ? lost : recomputed).push(ts.key);
  }
  return { processing: ws.processing.size, memory: ws.hasWhat.size, recomputed, lost, actors };
}

/**
 * Whether a task is needed by someone other than the worker at `address`: a client not
 * of its own tasks wants it, or a task waiting for it is needed so. Remembered across
 * the calls (the tasks a worker holds share their waiters), and walked without
 * recursion: a chain of a million waiting tasks would overflow the stack.
 */
function neededBeyond(
  address: string,
  workerOf: (client: string) => string | undefined,
): (ts: TaskState) => boolean {
  const known = new Map<TaskState, boolean>();
  const wantedElsewhere = (ts: TaskState): boolean => {
    for (const c of ts.whoWants) if (workerOf(c.id) !== address) return true;
    return false;
  };
  return (root) => {
    // The common cases, which a worker holding a million results meets a million times.
    if (wantedElsewhere(root)) return true;
    if (root.waiters.size === 0) return false;
    // A task is settled once every waiter of it is; one wanted elsewhere at once.
    const stack: TaskState[] = [root];
    const opened = new Set<TaskState>();
    while (stack.length > 0) {
      const ts = stack[stack.length - 1] as TaskState;
      if (known.has(ts)) {
        stack.pop();
      } else if (wantedElsewhere(ts)) {
        known.set(ts, true);
        stack.pop();
      } else if (!opened.has(ts)) {
        opened.add(ts);
        for (const w of ts.waiters) if (!known.has(w)) stack.push(w);
      } else {
        let any = false;
        for (const w of ts.waiters) if (known.get(w) === true) any = true;
        known.set(ts, any);
        stack.pop();
      }
    }
    return known.get(root) === true;
  };
}

/** How many keys a record names at most: a worker may hold millions. */
const SHOWN_KEYS = 20;

/**
 * Log that the worker at `address` left (`how`: "worker left", "worker missed its
 * heartbeats; removing it"), at `level`, with what it held, then what that loses.
 */
export function logWorkerLoss(
  logger: Logger,
  level: "info" | "warn",
  address: string,
  how: string,
  loss: WorkerLoss | null,
): void {
  if (loss === null) {
    logger[level]({ worker: address }, how);
    return;
  }
  logger[level]({ worker: address, processing: loss.processing, memory: loss.memory }, how);
  if (loss.recomputed.length > 0) {
    logger.warn(
      { worker: address, count: loss.recomputed.length },
      `the worker at ${address} left holding the only copy of ${plural(loss.recomputed.length, "result")}, which will be computed again: ${shown(loss.recomputed)}`,
    );
  }
  if (loss.lost.length > 0) {
    logger.error(
      { worker: address, count: loss.lost.length },
      `the worker at ${address} left holding the only copy of ${plural(loss.lost.length, "scattered value")}, lost for good (no task computes ${loss.lost.length === 1 ? "it" : "them"} again): ${shown(loss.lost)}`,
    );
  }
  // Said apart: an actor is never computed again, its futures fail (ACTOR_LOST).
  if (loss.actors.length > 0) {
    logger.error(
      { worker: address, count: loss.actors.length },
      `the worker at ${address} left holding ${plural(loss.actors.length, "actor")}, lost for good (${loss.actors.length === 1 ? "its futures fail" : "their futures fail"}: Worker holding Actor was lost): ${shown(loss.actors)}`,
    );
  }
}

/**
 * The keys in the message itself, as Dask's says them: the records `weft logs` and
 * `getSchedulerLogs` keep hold only fields of a plain value, not a list.
 */
function shown(keys: readonly string[]): string {
  const listed = keys.slice(0, SHOWN_KEYS).join(", ");
  return keys.length <= SHOWN_KEYS ? listed : `${listed} and ${keys.length - SHOWN_KEYS} more`;
}
