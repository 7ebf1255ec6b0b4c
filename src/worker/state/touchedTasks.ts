import type { TaskState, TaskStateState } from "./taskState.ts";

/**
 * The tasks transitioned while handling one stimulus, each once, in the order they
 * were first touched, with the state each had then (the seed's `tasks` set and
 * `initial_states` dict of `_transitions`). Reused from one stimulus to the next;
 * membership is an epoch stamped on the task, so no per-stimulus allocation is needed.
 */
export class TouchedTasks {
  readonly tasks: TaskState[] = [];
  readonly states: TaskStateState[] = [];
  length = 0;
  private epoch = 0;

  /** Start a new stimulus. */
  begin(): void {
    this.epoch++;
    this.end(); // in case the previous stimulus raised before its end()
  }

  /**
   * The stimulus is over: drop the references to its tasks at once, so that
   * forgotten ones (with their run specs and their graph) are not kept alive
   * until the next stimulus, which may be long in coming.
   */
  end(): void {
    for (let i = 0; i < this.length; i++) this.tasks[i] = undefined as unknown as TaskState;
    this.length = 0;
  }

  /** Record `ts` with its current state, unless it was already recorded in this stimulus. */
  touch(ts: TaskState): void {
    if (ts.touchedEpoch === this.epoch) return;
    ts.touchedEpoch = this.epoch;
    const i = this.length++;
    this.tasks[i] = ts;
    this.states[i] = ts.state;
  }
}
