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
    // Drop references to the previous stimulus's tasks, so forgotten ones can be collected.
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
