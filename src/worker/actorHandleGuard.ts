/**
 * Keeps a worker from taking a handle to an actor for the actor itself.
 *
 * A worker may hold, or be fetching, a handle to an actor (peers answer
 * `get_data` for an actor's key with an `ActorRef`, not the object) when the
 * scheduler asks it to compute that actor: the actor's worker was lost and
 * nobody wanted the actor, so the scheduler computes it again for the tasks
 * still waiting on it (as Dask does), and it may pick this worker. The state
 * machine, Dask's exactly, then goes wrong, as Dask's worker does:
 * - a handle in memory: `compute-task` answers `task-finished` at once, and the
 *   scheduler takes the handle for the actor;
 * - a handle in flight: the task resumes with the actor mark, which the seed's
 *   own validation forbids, and the handle that arrives becomes the object;
 * - a key in `fetch` or `missing`: the actor mark that `compute-task` sets is
 *   dropped on the way to waiting (the transition goes through released), and
 *   the actor runs as an ordinary task, its object in `data`.
 *
 * The state machine stays the seed's; the shells (`Worker`, the simulator's
 * worker) pass their stimuli through an {@link ActorHandleGuard}, which turns
 * those cases into ones the seed handles well. The key is released first
 * (`free-keys`), so `compute-task` finds it released. A fetch in flight cannot
 * be stopped: released, it is cancelled, and the `compute-task` is held back
 * until the fetch has ended (its result is then dropped, as for any cancelled
 * fetch). Found by the simulator (`weft sim --actors`; seeds 132, 897, 2751).
 */

import {
  type ComputeTaskEvent,
  FreeKeysEvent,
  type StateMachineEvent,
  type TaskState,
  type WorkerState,
} from "./state/index.ts";

/** One worker's guard; its shell feeds every stimulus through {@link feedGuarded}. */
export class ActorHandleGuard {
  /** Compute-tasks of actors held back while a fetch of their key is in flight. */
  private readonly heldBack = new Map<string, ComputeTaskEvent>();

  constructor(private readonly state: WorkerState) {}

  /** Actor compute-tasks held back now (for diagnostics and tests). */
  get heldBackKeys(): readonly string[] {
    return [...this.heldBack.keys()];
  }

  /**
   * True if `ev` may need {@link guard}: the shell feeds it on its own,
   * against the state as the stimuli before it left it.
   */
  concerns(ev: StateMachineEvent): boolean {
    switch (ev.cls) {
      case "ComputeTaskEvent":
        return ev.actor || this.heldBack.has(ev.key);
      case "FreeKeysEvent":
        return this.heldBack.size > 0;
      case "CancelComputeEvent":
        return this.heldBack.has(ev.key);
      default:
        return false;
    }
  }

  /**
   * The stimuli to feed in place of `ev` (possibly none), or null to feed `ev`
   * as it is. The state machine must be the one `ev` is about to reach.
   */
  guard(ev: StateMachineEvent): readonly StateMachineEvent[] | null {
    switch (ev.cls) {
      case "ComputeTaskEvent":
        return this.computeTask(ev);
      case "FreeKeysEvent":
        // The scheduler no longer wants those keys computed here.
        for (const key of ev.keys) this.heldBack.delete(key);
        return null;
      case "CancelComputeEvent":
        this.heldBack.delete(ev.key);
        return null;
      default:
        return null;
    }
  }

  /**
   * The held-back compute-tasks whose fetch has ended, to feed now (through
   * {@link guard} again), or null if none.
   */
  takeReleased(): ComputeTaskEvent[] | null {
    if (this.heldBack.size === 0) return null;
    let out: ComputeTaskEvent[] | null = null;
    for (const [key, ev] of this.heldBack) {
      if (isFetchInFlight(this.state.tasks.get(key))) continue;
      this.heldBack.delete(key);
      (out ??= []).push(ev);
    }
    return out;
  }

  private computeTask(ev: ComputeTaskEvent): readonly StateMachineEvent[] | null {
    if (this.heldBack.has(ev.key)) {
      // The later message stands, as it would have on the state machine.
      this.heldBack.delete(ev.key);
    }
    if (!ev.actor) return null;
    const ts = this.state.tasks.get(ev.key);
    if (ts === undefined) return null;
    if (isFetchInFlight(ts)) {
      this.heldBack.set(ev.key, ev);
      return ts.state === "flight"
        ? [new FreeKeysEvent({ keys: [ev.key], stimulusId: ev.stimulusId })]
        : [];
    }
    switch (ts.state) {
      case "fetch":
      case "missing":
        break;
      case "memory":
        // The actor's own object (it ran here) is in `actors`: nothing to fix.
        if (this.state.actors.has(ev.key)) return null;
        break;
      default:
        return null;
    }
    return [new FreeKeysEvent({ keys: [ev.key], stimulusId: ev.stimulusId }), ev];
  }
}

/** In flight, or cancelled or resumed with a fetch still in flight. */
function isFetchInFlight(ts: TaskState | undefined): boolean {
  if (ts === undefined) return false;
  if (ts.state === "flight") return true;
  return (ts.state === "cancelled" || ts.state === "resumed") && ts.previous === "flight";
}

/**
 * Feed `stims` through `feed` in order: each one the guard
 * {@link ActorHandleGuard.concerns} on its own and guarded, the others in runs
 * as they came; after each, the compute-tasks it let go.
 */
export function feedGuarded(
  guard: ActorHandleGuard,
  stims: readonly StateMachineEvent[],
  feed: (batch: readonly StateMachineEvent[]) => void,
): void {
  let start = 0;
  for (let i = 0; i < stims.length; i++) {
    const ev = stims[i];
    if (!guard.concerns(ev)) continue;
    if (i > start) feedBatch(guard, stims.slice(start, i), feed);
    const guarded = guard.guard(ev);
    if (guarded === null) feedBatch(guard, [ev], feed);
    else if (guarded.length > 0) feedBatch(guard, guarded, feed);
    start = i + 1;
  }
  if (start === 0) feedBatch(guard, stims, feed);
  else if (start < stims.length) feedBatch(guard, stims.slice(start), feed);
}

function feedBatch(
  guard: ActorHandleGuard,
  batch: readonly StateMachineEvent[],
  feed: (batch: readonly StateMachineEvent[]) => void,
): void {
  feed(batch);
  const released = guard.takeReleased();
  if (released !== null) feedGuarded(guard, released, feed);
}
