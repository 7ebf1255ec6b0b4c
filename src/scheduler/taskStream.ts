/**
 * The task stream (Dask's `TaskStreamPlugin`, behind `Client.get_task_stream`):
 * the scheduler server keeps a record of each task run its workers report,
 * finished or erred, with where it ran and when (the worker's `startstops`:
 * the compute, and the transfers of its inputs), the last `length` of them.
 * It records what the workers say ran, runs the state machine then ignores
 * (a run cancelled meanwhile) included.
 */

import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import { BoundedDeque } from "../util/boundedDeque.ts";
import type { StartStop } from "../worker/state/taskState.ts";

/** What a client asks of the task stream: runs ending at `since` (wall-clock seconds) or later, the last `count` of them. */
export interface TaskStreamQuery {
  readonly since?: number;
  readonly count?: number;
}

/** The last runs reported, oldest first. */
export class TaskStream {
  private readonly records: BoundedDeque<TaskStreamRecord>;

  /** @param length How many runs to keep (0: none). */
  constructor(length: number) {
    this.records = new BoundedDeque(length);
  }

  /** A message of `worker`: recorded if it reports a task's run. */
  observe(worker: string, msg: unknown): void {
    if (this.records.maxlen === 0 || typeof msg !== "object" || msg === null) return;
    const m = msg as { op?: unknown; key?: unknown; startstops?: unknown; nbytes?: unknown };
    if ((m.op !== "task-finished" && m.op !== "task-erred") || typeof m.key !== "string") return;
    this.records.push({
      key: m.key,
      worker,
      status: m.op === "task-finished" ? "OK" : "error",
      startstops: Array.isArray(m.startstops) ? (m.startstops as StartStop[]) : [],
      nbytes: typeof m.nbytes === "number" ? m.nbytes : null,
    });
  }

  /** The runs `query` asks for, oldest first. */
  query(query: TaskStreamQuery = {}): TaskStreamRecord[] {
    const { since, count } = query;
    let out = [...this.records];
    if (since !== undefined) out = out.filter((r) => lastStop(r) >= since);
    return count === undefined ? out : out.slice(Math.max(0, out.length - count));
  }
}

/** When the run ended: its last stop (0 without timings). */
function lastStop(r: TaskStreamRecord): number {
  let stop = 0;
  for (const ss of r.startstops) if (typeof ss.stop === "number" && ss.stop > stop) stop = ss.stop;
  return stop;
}
