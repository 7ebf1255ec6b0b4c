/** What the scheduler server counts as it goes (reported by the `counters` request). */

import type { SchedulerCounters } from "../protocol/messagesSession.ts";
import type { SchedulerEvent } from "./state/events.ts";
import type { SchedulerState } from "./state/schedulerState.ts";

/**
 * Running totals of the server; `snapshot` adds the state machine's count of
 * tasks done and the current sizes.
 */
export class Counters {
  /** `task-finished` reports received (duplicates and stale ones included). */
  tasksFinished = 0;
  /** `task-erred` reports received (tries that were retried included). */
  tasksErred = 0;
  /** Keys workers fetched from peers (the keys of `add-keys` reports). */
  keysTransferred = 0;
  /** Messages rejected as malformed. */
  rejectedMessages = 0;
  /** Messages that could not be delivered (their worker or client had gone). */
  undeliverable = 0;

  /** Count what a batch of handled stimuli reports. */
  observe(events: readonly SchedulerEvent[]): void {
    for (const ev of events) {
      if (ev.kind !== "worker-message") continue;
      const msg = ev.msg;
      if (msg.op === "task-finished") this.tasksFinished++;
      else if (msg.op === "task-erred") this.tasksErred++;
      else if (msg.op === "add-keys") this.keysTransferred += msg.keys.length;
    }
  }

  /** The totals, with what `state` counts and holds now and the number of connected clients. */
  snapshot(state: SchedulerState, clients: number): SchedulerCounters {
    return {
      tasksFinished: this.tasksFinished,
      tasksErred: this.tasksErred,
      tasksDone: state.tasksDone,
      tasksDoneErred: state.tasksDoneErred,
      keysTransferred: this.keysTransferred,
      stealsRequested: state.workStealing.requested,
      stealsConfirmed: state.workStealing.confirmed,
      replicasDropped: state.replicasDropped,
      rejectedMessages: this.rejectedMessages,
      tasks: state.tasks.size,
      workers: state.workers.size,
      clients,
    };
  }
}
