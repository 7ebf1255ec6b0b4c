/**
 * Why a worker is paused. Two parties pause it: the scheduler, while it retires
 * the worker (`pause`, then `unpause` if the retirement fails), and the
 * worker's own memory monitor. Either keeps it paused, so neither may resume a
 * worker the other still holds. The scheduler, which tracks the worker's
 * status and returns it to what the worker last said if the retirement fails,
 * hears of every pause and resumption of the monitor's, even while it holds
 * the worker paused itself.
 * Dask needs none of this: its retirement uses a status of its own
 * (`closing_gracefully`), which the memory monitor leaves alone.
 */

import type { WorkerStatusChangeMsg } from "../protocol/messagesWorker.ts";
import { PauseEvent, UnpauseEvent } from "./state/events.ts";

/** What one change of a {@link PauseReasons} asks the worker to do. */
export interface PauseChange {
  /** The event to feed the worker's state machine (`PauseEvent`, `UnpauseEvent`), if any. */
  readonly feed: "pause" | "unpause" | null;
  /** What to tell the scheduler with `worker-status-change`, if anything. */
  readonly tell: "paused" | "running" | null;
}

const NOTHING: PauseChange = { feed: null, tell: null };

/**
 * `change` carried out with `stimulusId`: the message to send the scheduler
 * and the event to feed the state machine, each null if none. One worker
 * shell and the simulator's carry changes out alike.
 */
export function pauseChangeOutputs(
  change: PauseChange,
  stimulusId: string,
): {
  readonly tell: WorkerStatusChangeMsg | null;
  readonly feed: PauseEvent | UnpauseEvent | null;
} {
  const tell: WorkerStatusChangeMsg | null =
    change.tell === null ? null : { op: "worker-status-change", status: change.tell, stimulusId };
  const feed =
    change.feed === "pause"
      ? new PauseEvent({ stimulusId })
      : change.feed === "unpause"
        ? new UnpauseEvent({ stimulusId })
        : null;
  return { tell, feed };
}

/** The reasons a worker is paused; see the module's comment. */
export class PauseReasons {
  private byScheduler = false;
  private forMemory = false;

  /** True while any party holds the worker paused. */
  get paused(): boolean {
    return this.byScheduler || this.forMemory;
  }

  /** True while the memory monitor holds the worker paused. */
  get pausedForMemory(): boolean {
    return this.forMemory;
  }

  /** The scheduler's `pause` (true) or `unpause` (false) arrived. */
  scheduler(pause: boolean): PauseChange {
    this.byScheduler = pause;
    if (pause) return { feed: "pause", tell: null };
    // The scheduler now takes the worker for running: it is not, while memory is short.
    if (this.forMemory) return { feed: null, tell: "paused" };
    return { feed: "unpause", tell: null };
  }

  /** The memory monitor pauses the worker (true) or lets it resume (false). */
  memory(pause: boolean): PauseChange {
    if (pause === this.forMemory) return NOTHING;
    this.forMemory = pause;
    if (pause) return { feed: this.byScheduler ? null : "pause", tell: "paused" };
    return { feed: this.byScheduler ? null : "unpause", tell: "running" };
  }
}
